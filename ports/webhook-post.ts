/** One try of a webhook delivery: a POST of `body` with `headers` (the signature's among them) to `url`. */
export interface WebhookRequest {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/**
 * What a try came to: an answer (any status: a redirect is an answer, never followed), no answer in time,
 * no connection (refused, reset, a name that does not resolve, TLS), or a connection not made because every
 * address the host resolved to is in a refused range (`blocked`). Never the answer's body.
 */
export type WebhookOutcome =
  | { readonly kind: 'answered'; readonly status: number }
  | { readonly kind: 'timed_out' }
  | { readonly kind: 'unreachable'; readonly reason: string }
  | { readonly kind: 'blocked'; readonly reason: string };

/** Sends one try; never throws for what the receiver or the network does. */
export type PostWebhook = (request: WebhookRequest) => Promise<WebhookOutcome>;
