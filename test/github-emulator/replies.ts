// What a route answers, and GitHub's error body: one shape for every route module.

export interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** A media type other than JSON the body is sent as (text), e.g. `application/vnd.github.sha`. */
  mediaType?: string;
}

const docs = 'https://docs.github.com/rest';

/** GitHub's error body: message, documentation URL, the status as a string, and any extra fields. */
export const error = (status: number, message: string, extra: Record<string, unknown> = {}): Reply => ({
  status,
  body: { message, documentation_url: docs, status: String(status), ...extra },
});

export const notFound = (): Reply => error(404, 'Not Found');
