// The viewer's pure rules, in Node: which links an app may open, the log rate gate, and the host
// context (every MCP Apps style variable, per theme, and the dimensions per display mode).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createRequire } from 'node:module';
import fc from 'fast-check';
import { hostContext, styleVariables, MAX_HEIGHT_PX, type PageFacts } from '../../src/viewer/host-context.ts';
import { MAX_LINK_LENGTH, openableLink } from '../../src/viewer/links.ts';
import { RateGate } from '../../src/viewer/rate-gate.ts';

describe('openableLink', () => {
  it('opens absolute http and https URLs', () => {
    assert.equal(openableLink('https://modelcontextprotocol.io/')?.href, 'https://modelcontextprotocol.io/');
    assert.equal(openableLink('http://127.0.0.1:8080/x?y=1#z')?.href, 'http://127.0.0.1:8080/x?y=1#z');
  });

  it('refuses every other scheme, relative links, credentials, non-strings and overlong links', () => {
    for (const link of ['javascript:alert(1)', ' javascript:alert(1)', 'JAVASCRIPT:alert(1)', 'data:text/html,<b>x</b>', 'blob:https://a.example/1',
      'file:///etc/passwd', 'about:blank', 'ftp://a.example/', '/relative', '//a.example/x', 'https://user:pw@a.example/', 'https://user@a.example/', '', 42, null,
      `https://a.example/${'x'.repeat(MAX_LINK_LENGTH)}`]) {
      assert.equal(openableLink(link), null, String(link));
    }
  });

  it('never answers a URL whose scheme is not http or https, whatever the text', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.webUrl({ validSchemes: ['http', 'https', 'ftp', 'javascript', 'data', 'file'] })), (text) => {
        const url = openableLink(text);
        return url === null || ((url.protocol === 'http:' || url.protocol === 'https:') && url.username === '' && url.password === '');
      }),
    );
  });
});

describe('RateGate', () => {
  it('lets a burst through, then the average rate', () => {
    const gate = new RateGate(10, 3);
    assert.deepEqual([0, 0, 0, 0].map(() => gate.admit(1_000)), [true, true, true, false]);
    assert.equal(gate.admit(1_050), false, 'half a token is not enough');
    assert.equal(gate.admit(1_100), true, 'a tenth of a second buys one');
  });

  it('never admits more than burst + rate × elapsed, whatever the arrival times', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 50 }),
        fc.integer({ min: 1, max: 50 }),
        fc.array(fc.integer({ min: 0, max: 5_000 }), { minLength: 1, maxLength: 300 }),
        (perSecond, burst, gaps) => {
          const gate = new RateGate(perSecond, burst);
          let now = 0;
          let admitted = 0;
          for (const gap of gaps) {
            now += gap;
            if (gate.admit(now)) admitted += 1;
          }
          return admitted <= burst + (now * perSecond) / 1000 + 1e-9;
        },
      ),
    );
  });

  it('is not fooled by a clock that goes back', () => {
    const gate = new RateGate(1, 1);
    assert.equal(gate.admit(10_000), true);
    assert.equal(gate.admit(0), false);
    assert.equal(gate.admit(10_000), false, 'going back and forth earns nothing');
  });
});

/** The style variable names of the MCP Apps specification, from ext-apps' published JSON schema. */
const SPEC_VARIABLES: string[] = (
  createRequire(import.meta.url)('@modelcontextprotocol/ext-apps/schema.json').$defs.McpUiStyleVariableKey.anyOf as { const: string }[]
).map((entry) => entry.const);

describe('hostContext', () => {
  const facts: PageFacts = { theme: 'light', displayMode: 'inline', width: 640.4, windowHeight: 700, locale: 'en-GB', timeZone: 'Europe/Paris', touch: false, hover: true };

  it('gives every MCP Apps style variable, per theme, with colours that differ', () => {
    const light = styleVariables('light');
    const dark = styleVariables('dark');
    assert.ok(SPEC_VARIABLES.length > 50, 'the schema names the variables');
    assert.deepEqual(Object.keys(light).sort(), [...SPEC_VARIABLES].sort());
    assert.deepEqual(Object.keys(dark).sort(), [...SPEC_VARIABLES].sort());
    assert.ok(Object.values(light).every((value) => typeof value === 'string' && value !== ''));
    assert.notEqual(light['--color-background-primary'], dark['--color-background-primary']);
    assert.equal(light['--font-sans'], dark['--font-sans']);
  });

  it('describes the page: dimensions per display mode, locale, time zone, platform and the saved tool', () => {
    const inline = hostContext(facts, { name: 'get-time', title: 'Clock' });
    assert.deepEqual(inline.containerDimensions, { width: 640, maxHeight: MAX_HEIGHT_PX });
    assert.deepEqual(inline.availableDisplayModes, ['inline', 'fullscreen']);
    assert.equal(inline.locale, 'en-GB');
    assert.equal(inline.timeZone, 'Europe/Paris');
    assert.equal(inline.platform, 'web');
    assert.deepEqual(inline.deviceCapabilities, { touch: false, hover: true });
    assert.deepEqual(inline.toolInfo, { tool: { name: 'get-time', title: 'Clock', inputSchema: { type: 'object' } } });
    const full = hostContext({ ...facts, displayMode: 'fullscreen', theme: 'dark' }, null);
    assert.deepEqual(full.containerDimensions, { width: 640, height: 700 });
    assert.equal(full.theme, 'dark');
    assert.equal(full.toolInfo, undefined);
  });
});
