import { accessSync, constants } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

/** Where Debian and Ubuntu put Chromium; `CHROMIUM_PATH` comes first. */
const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser'];

/** Flags for a headless Chromium that makes no network calls of its own (see REFERENCES.md). */
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

const isExecutable = (path: string): boolean => {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
};

/** The Chromium executable to test with: `CHROMIUM_PATH` if set, else a system install; null when none. */
export function findChromium(env: NodeJS.ProcessEnv = process.env): string | null {
  const named = env.CHROMIUM_PATH;
  if (named !== undefined && named !== '') return isExecutable(named) ? named : null;
  return CANDIDATES.find(isExecutable) ?? null;
}

/** Why browser tests skip when no Chromium is found, for `{ skip }`. */
export const NO_CHROMIUM =
  'no Chromium found (set CHROMIUM_PATH to its executable, or install the Debian package: apt-get install chromium)';

/**
 * Launches the system Chromium through playwright-core (never a downloaded browser), or answers
 * null when there is none. A Chromium that is found but fails to start is an error, not a skip.
 */
export async function launchChromium(): Promise<Browser | null> {
  const executablePath = findChromium();
  if (executablePath === null) return null;
  return chromium.launch({ executablePath, args: ARGS });
}
