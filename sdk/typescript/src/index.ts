// @reftrack/sdk: reftrack's server SDK. A brand's backend reports leads, sales and refunds with its
// program API key (Reftrack), and verifies reftrack's webhooks (verifyWebhook). No runtime dependencies:
// the global fetch and WebCrypto.

export {
  DEFAULT_BASE_URL,
  Reftrack,
  VERSION,
  type CallOptions,
  type Failure,
  type Fetch,
  type FetchResponse,
  type Lead,
  type LeadInput,
  type Logger,
  type Provider,
  type Refund,
  type RefundInput,
  type ReftrackOptions,
  type Result,
  type Rotation,
  type Sale,
  type SaleInput,
  type SaleNotAttributed,
  type SaleResponse,
  type Success,
  type Warning,
} from "./client.js";
export { ErrorCodes, ReftrackError, type ReftrackErrorInit } from "./errors.js";
export { defaultRetryPolicy, noRetry, type RetryPolicy } from "./retry.js";
export {
  WebhookVerificationError,
  verifyWebhook,
  type VerifyWebhookOptions,
  type WebhookErrorReason,
  type WebhookEvent,
  type WebhookHeaders,
} from "./webhook.js";
/** The types generated from the published OpenAPI document, for every route. */
export type { components, operations, paths } from "./schema.js";
