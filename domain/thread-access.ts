/** Who may use a thread: its owner and its members, nobody else. */
export function canAccessThread(userId: string, thread: { readonly owner: string }, members: readonly string[]): boolean {
  return thread.owner === userId || members.includes(userId);
}
