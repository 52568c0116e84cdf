/**
 * Building the page's elements: text always goes in as text (keys, reasons and alert names come from
 * the store and are never parsed as HTML), SVG in its own namespace.
 */

const SVG_NS = 'http://www.w3.org/2000/svg';

/**
 * An element: `h('td', { class: 'num', 'data-field': 'passed' }, '42')`. Attributes with `null`,
 * `undefined` or `false` are left out; `on<event>` attributes are listeners; children are nodes,
 * strings, numbers or arrays of them.
 */
export function h(tag, attributes = {}, ...children) {
  return fill(document.createElement(tag), attributes, children);
}

/** The same, for SVG elements. */
export function svg(tag, attributes = {}, ...children) {
  return fill(document.createElementNS(SVG_NS, tag), attributes, children);
}

function fill(element, attributes, children) {
  for (const [name, value] of Object.entries(attributes)) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith('on') && typeof value === 'function') {
      element.addEventListener(name.slice(2), value);
    } else {
      element.setAttribute(name, value === true ? '' : String(value));
    }
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child instanceof Node ? child : String(child));
  }
  return element;
}

/** Replace what a section's body shows. */
export function show(container, ...children) {
  container.replaceChildren(...children.flat(Infinity).filter((c) => c !== null && c !== undefined));
}

/** A table with a header row, or a line saying there is nothing. */
export function table(headers, rows, emptyText) {
  if (rows.length === 0) return h('p', { class: 'empty' }, emptyText);
  return h(
    'table',
    {},
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        headers.map((text) => h('th', {}, text)),
      ),
    ),
    h('tbody', {}, rows),
  );
}

/** `12 s`, `3 min 5 s`, `2 h 10 min` for a duration in milliseconds. */
export function duration(ms) {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  const min = Math.floor(s / 60);
  if (min < 60) return `${min} min ${s % 60} s`;
  return `${Math.floor(min / 60)} h ${min % 60} min`;
}

/** A time as the operator's clock shows it. */
export function clockTime(iso) {
  return new Date(iso).toLocaleTimeString();
}
