/**
 * Which links an app may open (`ui/open-link`): absolute http and https URLs only, without
 * credentials in them. Anything else (javascript:, data:, blob:, file:, a relative path, a URL with
 * `user:password@`) is refused, so an app can neither run script in the viewer nor navigate it.
 * Pure: used by the viewer page and tested in Node.
 */
export function openableLink(text: unknown): URL | null {
  if (typeof text !== 'string' || text.length === 0 || text.length > MAX_LINK_LENGTH) return null;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  if (url.username !== '' || url.password !== '') return null;
  return url;
}

/** Longer links are refused: no browser needs more, and a window name bar shows less. */
export const MAX_LINK_LENGTH = 8_192;
