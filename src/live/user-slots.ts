/** Live sockets (and upgrades under way) per user on this instance, for the per-user cap. */
export interface UserSlots {
  /** The user's sockets open and upgrades under way. */
  readonly held: (userId: string) => number;
  /**
   * Takes one of a user's slots for an upgrade under way; answers its release, idempotent. Once the
   * socket is open, its `close` gives the slot back instead ({@link UserSlots.release}).
   */
  readonly take: (userId: string) => () => void;
  /** Takes a slot that is given back by {@link UserSlots.release} alone. */
  readonly retake: (userId: string) => void;
  /** Gives one of the user's slots back. */
  readonly release: (userId: string) => void;
}

/** The per-user count; emptied entries go, so it holds only the users with sockets now. */
export function userSlots(): UserSlots {
  const perUser = new Map<string, number>();
  const release = (userId: string): void => {
    const left = (perUser.get(userId) ?? 1) - 1;
    if (left <= 0) perUser.delete(userId);
    else perUser.set(userId, left);
  };
  const retake = (userId: string): void => void perUser.set(userId, (perUser.get(userId) ?? 0) + 1);
  return {
    held: (userId) => perUser.get(userId) ?? 0,
    // Made here, apart from the upgrade's scope: a listener closing over that scope would keep the request alive.
    take: (userId) => {
      retake(userId);
      let held = true;
      return () => {
        if (!held) return;
        held = false;
        release(userId);
      };
    },
    retake,
    release,
  };
}
