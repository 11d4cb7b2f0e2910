/** What a checkpoint commit's message records, as trailers, beside its title. */
export const TRAILER = { seq: 'Console-Checkpoint', run: 'Console-Run', message: 'Console-Message', created: 'Console-Created', files: 'Console-Files-Changed', head: 'Console-Head', rewind: 'Console-Rewind' } as const;

/** The value of trailer `name` in a checkpoint's `message`, or null. */
export function trailer(message: string, name: string): string | null {
  const found = new RegExp(`^${name}: (.*)$`, 'm').exec(message);
  return found === null ? null : found[1]!;
}

/** `message` with trailer `name` set to `value` (its line replaced). */
export const withTrailer = (message: string, name: string, value: string): string =>
  message.replace(new RegExp(`^${name}: .*$`, 'm'), `${name}: ${value}`);
