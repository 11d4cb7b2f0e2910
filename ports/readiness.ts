/**
 * Whether the service can do its work now (storage reachable). Answers false rather than
 * throwing when something it depends on is down.
 */
export type ReadinessProbe = () => Promise<boolean>;
