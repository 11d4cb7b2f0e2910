/** A new time-ordered id (UUIDv7, lower case): what the host answers for every row a use case names before writing it. */
export type NewId = () => string;
