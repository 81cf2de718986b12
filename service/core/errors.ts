/**
 * The one error type of the service. Handlers and stores throw ApiError; the
 * error middleware (app.ts) is the only place that turns it into a response
 * body `{code, message, details}` (docs/api.md "Errors").
 */

export type Details = Record<string, unknown>;

/** Every code the service answers with, by status (docs/api.md "Errors"). */
export const ERROR_CODES = {
  400: ['bad_request', 'bad_filter', 'bad_cursor', 'invalid_document'],
  401: ['unauthenticated'],
  403: ['capability_required', 'not_a_task', 'bad_origin'],
  404: ['not_found'],
  409: [
    'etag_mismatch', 'name_taken', 'job_finished', 'already_running', 'not_running',
    'port_conflict', 'heavy_conflict', 'not_installed', 'conflict', 'in_use', 'missing',
    'confirm_required', 'preview_changed', 'not_reclaimable', 'approval_required',
    'id_taken', 'not_fetched', 'already_exists', 'already_exporting', 'no_timeline',
  ],
  410: ['asset_missing'],
  413: ['too_large'],
  416: ['range_not_satisfiable'],
  422: [
    'outside_roots', 'cross_device', 'not_a_file', 'unknown_session', 'self_handoff',
    'not_launchable', 'blocked', 'not_linkable', 'invalid_timeline',
  ],
  429: ['quota_exceeded'],
  500: ['internal'],
  501: ['unsupported'],
  507: ['disk_space'],
} as const;

type Catalog = typeof ERROR_CODES;
export type ErrorStatus = keyof Catalog;
export type ErrorCode = Catalog[ErrorStatus][number];

export class ApiError extends Error {
  constructor(
    readonly status: ErrorStatus,
    readonly code: ErrorCode,
    message: string,
    readonly details: Details = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }

  toBody(): { code: string; message: string; details: Details } {
    return { code: this.code, message: this.message, details: this.details };
  }

  static badRequest(message: string, details?: Details): ApiError {
    return new ApiError(400, 'bad_request', message, details);
  }
  static invalidDocument(message: string, details?: Details): ApiError {
    return new ApiError(400, 'invalid_document', message, details);
  }
  static badCursor(message = 'The cursor is not one this list handed out; start again without it.'): ApiError {
    return new ApiError(400, 'bad_cursor', message);
  }
  static unauthenticated(message = 'A valid studio token is required (Authorization: Bearer <token>).'): ApiError {
    return new ApiError(401, 'unauthenticated', message);
  }
  static capabilityRequired(capability: string): ApiError {
    return new ApiError(403, 'capability_required', `This token lacks the capability "${capability}".`, { capability });
  }
  static badOrigin(message: string): ApiError {
    return new ApiError(403, 'bad_origin', message);
  }
  static notFound(what = 'The resource'): ApiError {
    return new ApiError(404, 'not_found', `${what} was not found.`);
  }
  static etagMismatch(message = 'The resource has changed since it was read (If-Match does not match).'): ApiError {
    return new ApiError(409, 'etag_mismatch', message);
  }
  static nameTaken(name: string): ApiError {
    return new ApiError(409, 'name_taken', `The name "${name}" is already used by a live session.`, { name });
  }
  static tooLarge(limit: number, what = 'The request body'): ApiError {
    return new ApiError(413, 'too_large', `${what} is larger than the limit of ${limit} bytes.`, { limit });
  }
  static quotaExceeded(quota: string, limit: number, used: number): ApiError {
    return new ApiError(429, 'quota_exceeded', `The studio's ${quota} quota (${limit}) would be exceeded; ${used} in use.`, {
      quota,
      limit,
      used,
    });
  }
  static unsupported(message: string, details?: Details): ApiError {
    return new ApiError(501, 'unsupported', message, details);
  }
  // Assets.
  static assetMissing(message = 'The asset\'s file is gone (reclaimed or removed).'): ApiError {
    return new ApiError(410, 'asset_missing', message);
  }
  static rangeNotSatisfiable(size: number): ApiError {
    return new ApiError(416, 'range_not_satisfiable', `The requested range is outside the ${size} bytes of the asset.`, { size });
  }
  static diskSpace(needed: number, free: number): ApiError {
    return new ApiError(507, 'disk_space', `The upload needs ${needed} bytes free (size plus headroom); the volume has ${free}.`, {
      needed,
      free,
    });
  }
  static outsideRoots(message: string): ApiError {
    return new ApiError(422, 'outside_roots', message);
  }
  static notAFile(message: string): ApiError {
    return new ApiError(422, 'not_a_file', message);
  }
  static crossDevice(message: string): ApiError {
    return new ApiError(422, 'cross_device', message);
  }
  static unknownSession(sessionId: string): ApiError {
    return new ApiError(422, 'unknown_session', `"${sessionId}" is not one of your live sessions.`, { session_id: sessionId });
  }
  static previewChanged(preview: Details): ApiError {
    return new ApiError(409, 'preview_changed', 'The set of reclaimable assets changed since that preview; check the new one.', preview);
  }
  static notReclaimable(assets: string[]): ApiError {
    return new ApiError(409, 'not_reclaimable', `${assets.length} of the given assets cannot be reclaimed.`, { assets });
  }
  // Timelines.
  static invalidTimeline(message: string, clips: { track: string | null; index: number; reason: string }[] = []): ApiError {
    return new ApiError(422, 'invalid_timeline', message, { clips });
  }
  static alreadyExporting(jobId: string): ApiError {
    return new ApiError(409, 'already_exporting', 'This sequence is being exported already; wait for that export to end, or cancel it.', { job: jobId });
  }
  static noTimeline(): ApiError {
    return new ApiError(409, 'no_timeline', 'You have no sequence to append to: create one first, or give timeline_id.');
  }
  static conflict(message: string, details?: Details): ApiError {
    return new ApiError(409, 'conflict', message, details);
  }
}

/** Every code, flat, for the API reference and tests. */
export function allErrorCodes(): { status: number; code: string }[] {
  return Object.entries(ERROR_CODES).flatMap(([status, codes]) =>
    codes.map((code) => ({ status: Number(status), code })),
  );
}
