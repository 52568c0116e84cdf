/**
 * An HTTP answer summed up in one line for differential tests, so that nginx's and the replica's can
 * be compared as strings: the status, the chosen headers that are present (any `:port/` in them as
 * `:PORT/`, the two listen apart), and the body — an HTML page by its title, since nginx's own pages
 * name its version, any other body as JSON text.
 */
import { request } from 'undici';

export interface AnswerSummaryOptions {
  readonly method?: string;
  /** Header names to show, in this order, when the answer has them. */
  readonly headers?: readonly string[];
  /** Header lines to send (`host`, …). */
  readonly requestHeaders?: Readonly<Record<string, string>>;
}

export async function answerSummary(url: string, options: AnswerSummaryOptions = {}): Promise<string> {
  const method = (options.method ?? 'GET') as 'GET';
  const res = await request(url, { method, headers: options.requestHeaders });
  const body = await res.body.text();
  const shown = (options.headers ?? []).flatMap((name) => {
    const value = res.headers[name];
    return value === undefined ? [] : [` ${name}:${String(value).replace(/:\d+\//, ':PORT/')}`];
  });
  const text = body.includes('<html>') ? `(page ${/<title>([^<]*)</.exec(body)?.[1]})` : JSON.stringify(body);
  return `${res.statusCode}${shown.join('')} ${text}`;
}
