/*
 * The host context the viewer gives an app (MCP Apps `McpUiHostContext`): theme, style variables and
 * fonts, display mode, container dimensions, locale, time zone, platform, device capabilities and the
 * saved tool's info. Browser code; `hostContext` is pure over the facts it is given.
 */
import type { McpUiDisplayMode, McpUiHostContext, McpUiStyles } from '@modelcontextprotocol/ext-apps/app-bridge';

export type Theme = 'light' | 'dark';

/** The display modes this viewer offers: inline in the page, or laid out over the whole window. */
export const DISPLAY_MODES: readonly McpUiDisplayMode[] = ['inline', 'fullscreen'];

/** An app cannot grow its frame past this height, whatever it asks for. */
export const MAX_HEIGHT_PX = 10_000;

const SANS = 'system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif';
const MONO = 'ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace';

/** What both themes share: fonts, sizes, radii, borders. System fonts only, so no font file is loaded. */
const SHARED = {
  '--font-sans': SANS,
  '--font-mono': MONO,
  '--font-weight-normal': '400',
  '--font-weight-medium': '500',
  '--font-weight-semibold': '600',
  '--font-weight-bold': '700',
  '--font-text-xs-size': '12px',
  '--font-text-sm-size': '14px',
  '--font-text-md-size': '16px',
  '--font-text-lg-size': '18px',
  '--font-heading-xs-size': '12px',
  '--font-heading-sm-size': '14px',
  '--font-heading-md-size': '16px',
  '--font-heading-lg-size': '20px',
  '--font-heading-xl-size': '24px',
  '--font-heading-2xl-size': '30px',
  '--font-heading-3xl-size': '36px',
  '--font-text-xs-line-height': '1.4',
  '--font-text-sm-line-height': '1.4',
  '--font-text-md-line-height': '1.5',
  '--font-text-lg-line-height': '1.5',
  '--font-heading-xs-line-height': '1.3',
  '--font-heading-sm-line-height': '1.3',
  '--font-heading-md-line-height': '1.3',
  '--font-heading-lg-line-height': '1.25',
  '--font-heading-xl-line-height': '1.2',
  '--font-heading-2xl-line-height': '1.15',
  '--font-heading-3xl-line-height': '1.1',
  '--border-radius-xs': '2px',
  '--border-radius-sm': '4px',
  '--border-radius-md': '6px',
  '--border-radius-lg': '10px',
  '--border-radius-xl': '16px',
  '--border-radius-full': '9999px',
  '--border-width-regular': '1px',
} as const;

/** Colours per theme, in the same order as the MCP Apps variable list. */
const COLOURS: Record<Theme, Record<string, string>> = {
  light: {
    '--color-background-primary': '#ffffff',
    '--color-background-secondary': '#f4f7fb',
    '--color-background-tertiary': '#e8edf3',
    '--color-background-inverse': '#1b2430',
    '--color-background-ghost': 'transparent',
    '--color-background-info': '#e6f0fd',
    '--color-background-danger': '#fdecec',
    '--color-background-success': '#e7f6ec',
    '--color-background-warning': '#fff4e0',
    '--color-background-disabled': '#eef1f5',
    '--color-text-primary': '#1b2430',
    '--color-text-secondary': '#4a5563',
    '--color-text-tertiary': '#6b7684',
    '--color-text-inverse': '#ffffff',
    '--color-text-ghost': '#8a95a3',
    '--color-text-info': '#1f5fbf',
    '--color-text-danger': '#a4262c',
    '--color-text-success': '#1e7b3a',
    '--color-text-warning': '#8a5a00',
    '--color-text-disabled': '#9aa4b1',
    '--color-border-primary': '#c9d2dd',
    '--color-border-secondary': '#dde3ea',
    '--color-border-tertiary': '#eef1f5',
    '--color-border-inverse': '#1b2430',
    '--color-border-ghost': 'transparent',
    '--color-border-info': '#9cc0f2',
    '--color-border-danger': '#f0a8ab',
    '--color-border-success': '#9fd8b0',
    '--color-border-warning': '#f2cd85',
    '--color-border-disabled': '#e1e6ec',
    '--color-ring-primary': '#1f5fbf',
    '--color-ring-secondary': '#6b7684',
    '--color-ring-inverse': '#ffffff',
    '--color-ring-info': '#1f5fbf',
    '--color-ring-danger': '#a4262c',
    '--color-ring-success': '#1e7b3a',
    '--color-ring-warning': '#8a5a00',
    '--shadow-hairline': '0 0 0 1px rgba(27, 36, 48, 0.08)',
    '--shadow-sm': '0 1px 2px rgba(27, 36, 48, 0.08)',
    '--shadow-md': '0 4px 12px rgba(27, 36, 48, 0.10)',
    '--shadow-lg': '0 12px 32px rgba(27, 36, 48, 0.14)',
  },
  dark: {
    '--color-background-primary': '#161b22',
    '--color-background-secondary': '#0f1318',
    '--color-background-tertiary': '#222a33',
    '--color-background-inverse': '#e9eef4',
    '--color-background-ghost': 'transparent',
    '--color-background-info': '#13263f',
    '--color-background-danger': '#3a1618',
    '--color-background-success': '#132b1c',
    '--color-background-warning': '#33260b',
    '--color-background-disabled': '#1d232b',
    '--color-text-primary': '#e9eef4',
    '--color-text-secondary': '#b5bfcb',
    '--color-text-tertiary': '#8d98a6',
    '--color-text-inverse': '#161b22',
    '--color-text-ghost': '#6b7684',
    '--color-text-info': '#8ab4f8',
    '--color-text-danger': '#f28b8f',
    '--color-text-success': '#81c995',
    '--color-text-warning': '#f2c46b',
    '--color-text-disabled': '#5d6773',
    '--color-border-primary': '#3a4450',
    '--color-border-secondary': '#2c343e',
    '--color-border-tertiary': '#222a33',
    '--color-border-inverse': '#e9eef4',
    '--color-border-ghost': 'transparent',
    '--color-border-info': '#2f5a94',
    '--color-border-danger': '#7c2d31',
    '--color-border-success': '#2d6a40',
    '--color-border-warning': '#7a5a1c',
    '--color-border-disabled': '#2a313a',
    '--color-ring-primary': '#8ab4f8',
    '--color-ring-secondary': '#8d98a6',
    '--color-ring-inverse': '#161b22',
    '--color-ring-info': '#8ab4f8',
    '--color-ring-danger': '#f28b8f',
    '--color-ring-success': '#81c995',
    '--color-ring-warning': '#f2c46b',
    '--shadow-hairline': '0 0 0 1px rgba(0, 0, 0, 0.4)',
    '--shadow-sm': '0 1px 2px rgba(0, 0, 0, 0.4)',
    '--shadow-md': '0 4px 12px rgba(0, 0, 0, 0.45)',
    '--shadow-lg': '0 12px 32px rgba(0, 0, 0, 0.5)',
  },
};

/** The MCP Apps style variables for a theme: every variable the specification names. */
export function styleVariables(theme: Theme): McpUiStyles {
  return { ...SHARED, ...COLOURS[theme] } as McpUiStyles;
}

/** The facts of the page the context is built from; the page reads them, tests can give them. */
export interface PageFacts {
  readonly theme: Theme;
  readonly displayMode: McpUiDisplayMode;
  /** The frame's width in CSS pixels, and the window's height (for full-window layout). */
  readonly width: number;
  readonly windowHeight: number;
  readonly locale: string;
  readonly timeZone: string;
  readonly touch: boolean;
  readonly hover: boolean;
}

/** The saved tool the app was made for: its name, with an open input schema (the schema is not saved). */
export interface SavedTool {
  readonly name: string;
  readonly title?: string;
}

/** The whole host context for these facts. */
export function hostContext(facts: PageFacts, tool: SavedTool | null): McpUiHostContext {
  const width = Math.max(0, Math.round(facts.width));
  return {
    theme: facts.theme,
    styles: { variables: styleVariables(facts.theme) },
    displayMode: facts.displayMode,
    availableDisplayModes: [...DISPLAY_MODES],
    containerDimensions:
      facts.displayMode === 'fullscreen'
        ? { width, height: Math.max(0, Math.round(facts.windowHeight)) }
        : { width, maxHeight: MAX_HEIGHT_PX },
    locale: facts.locale,
    timeZone: facts.timeZone,
    platform: 'web',
    userAgent: 'agent-console-viewer',
    deviceCapabilities: { touch: facts.touch, hover: facts.hover },
    ...(tool === null
      ? {}
      : { toolInfo: { tool: { name: tool.name, ...(tool.title === undefined ? {} : { title: tool.title }), inputSchema: { type: 'object' as const } } } }),
  };
}
