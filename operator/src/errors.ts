/** Every operator error has a code and a message a person can act on. */
export class OperatorError extends Error {
  readonly code: string;
  constructor(code: string, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'OperatorError';
    this.code = code;
  }
}

/** A non-2xx answer of the Kubernetes API. `reason` is the Status reason (NotFound, Conflict, AlreadyExists…). */
export class KubeApiError extends OperatorError {
  readonly status: number;
  readonly reason: string;
  constructor(status: number, reason: string, message: string) {
    super(`KUBE_${status}`, message);
    this.name = 'KubeApiError';
    this.status = status;
    this.reason = reason;
  }

  static fromResponse(method: string, path: string, status: number, text: string): KubeApiError {
    let reason = 'Unknown';
    let message = text.slice(0, 500);
    try {
      const body = JSON.parse(text) as { reason?: string; message?: string };
      reason = body.reason ?? reason;
      message = body.message ?? message;
    } catch {}
    return new KubeApiError(status, reason, `${method} ${path}: ${status} ${reason}: ${message}`);
  }
}

export function isNotFound(err: unknown): boolean {
  return err instanceof KubeApiError && err.status === 404;
}
export function isConflict(err: unknown): boolean {
  return err instanceof KubeApiError && err.status === 409;
}
export function isGone(err: unknown): boolean {
  return err instanceof KubeApiError && err.status === 410;
}

/** A referenced Secret (or key) is missing: reported as Degraded/SecretNotFound, retried with backoff. */
export class SecretNotFoundError extends OperatorError {
  readonly secret: string;
  /** The spec field that references the Secret (`database.secretRef`), named in the status message. */
  readonly field: string | undefined;
  constructor(secret: string, key?: string, field?: string) {
    super(
      'SECRET_NOT_FOUND',
      key ? `Secret ${secret} has no key ${JSON.stringify(key)}` : `Secret ${secret} not found in the namespace`,
    );
    this.name = 'SecretNotFoundError';
    this.secret = secret;
    this.field = field;
  }
}

/**
 * The spec asks for something the operator cannot do (invalid, or unsupported by this version): reported as
 * Degraded with `reason`, with a Warning Event, and not retried until the spec changes.
 */
export class SpecRefusedError extends OperatorError {
  readonly reason: string;
  constructor(reason: string, message: string) {
    super('SPEC_REFUSED', message);
    this.name = 'SpecRefusedError';
    this.reason = reason;
  }
}

/** An object the operator would write exists and is controlled by someone else: it is left alone. */
export class NotOwnedError extends OperatorError {
  constructor(what: string, owner: string) {
    super('NOT_OWNED', `${what} exists and is not controlled by this resource (controller: ${owner}); left unchanged`);
    this.name = 'NotOwnedError';
  }
}
