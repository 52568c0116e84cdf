/** The `Date` header's value (RFC 9110 IMF-fixdate), formatted once a second, as node:http does. */

let dateSecond = -1;
let dateText = '';

export function httpDate(): string {
  const second = Math.floor(Date.now() / 1000);
  if (second !== dateSecond) {
    dateSecond = second;
    dateText = new Date(second * 1000).toUTCString();
  }
  return dateText;
}
