// The part of @xmpp/client 0.14 this adapter uses (the package ships no types).
declare module '@xmpp/client' {
  import type { EventEmitter } from 'node:events';

  export interface Element {
    readonly name: string;
    readonly attrs: Record<string, string | undefined>;
    readonly children: ReadonlyArray<Element | string>;
    is(name: string, xmlns?: string): boolean;
    getAttr(name: string): string | undefined;
    getChild(name: string, xmlns?: string): Element | undefined;
    getChildren(name: string, xmlns?: string): Element[];
    getChildElements(): Element[];
    getChildText(name: string, xmlns?: string): string | null;
    getText(): string;
    toString(): string;
  }

  export function xml(name: string, attrs?: Record<string, string | undefined> | null, ...children: Array<Element | string | null | undefined>): Element;

  export interface Jid {
    bare(): Jid;
    toString(): string;
    getLocal(): string;
    getDomain(): string;
    getResource(): string;
  }
  export function jid(address: string): Jid;

  export interface Client extends EventEmitter {
    readonly status: string;
    readonly jid: Jid | null;
    readonly reconnect: EventEmitter & { delay: number; stop(): void; start(): void; scheduleReconnect(): void; reconnect(): Promise<void> };
    readonly iqCaller: { request(stanza: Element, timeout?: number): Promise<Element> };
    readonly streamManagement: EventEmitter & { enabled: boolean };
    start(): Promise<Jid>;
    stop(): Promise<void>;
    send(stanza: Element): Promise<void>;
    disconnect(timeout?: number): Promise<void>;
  }

  export function client(options: {
    service: string;
    domain: string;
    username: string;
    password: string;
    resource?: string;
    timeout?: number;
  }): Client;
}
