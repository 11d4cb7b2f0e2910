/** The trees compiled to dist/. */
export declare const TREES: readonly string[];
/** The other files a build is made of (the build scripts, the lock file). */
export declare const BUILD_INPUTS: readonly string[];
/** The source files to compile, the list of inputs written to the stamp, and whether the build in `out` is fresh. */
export declare function buildState(root: string, out?: string): { sources: string[]; list: string; fresh: boolean };
