// A small XML reader for whiteboard files (standalone SVG documents). It
// needs no DOM, so it runs in node's unit tests as in the browser, and it
// keeps every node's place in the source, so what the editor does not
// understand is written back byte for byte.

export type XmlAttr = [name: string, value: string];

export type XmlNode =
  | { type: "element"; name: string; attrs: XmlAttr[]; children: XmlNode[]; start: number; openEnd: number; end: number; selfClosing: boolean }
  | { type: "text"; text: string; start: number; end: number }
  | { type: "other"; start: number; end: number };

export type XmlElement = Extract<XmlNode, { type: "element" }>;

export class XmlError extends Error {
  constructor(message: string, readonly at: number) {
    super(message);
    this.name = "XmlError";
  }
}

const NAMED: Record<string, string> = { lt: "<", gt: ">", amp: "&", quot: '"', apos: "'", nbsp: "\u00a0" };

/** `&lt;` → `<`, `&#38;` → `&`; an unknown entity is left as written. */
export function decodeEntities(text: string): string {
  if (!text.includes("&")) return text;
  return text.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|[a-zA-Z]+);/g, (whole, name: string) => {
    if (name[0] === "#") {
      const code = name[1] === "x" ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return NAMED[name] ?? whole;
  });
}

export function escapeText(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

export function escapeAttr(text: string): string {
  return escapeText(text).replace(/"/g, "&quot;");
}

/** Where `at` is, as "line L, column C" (for error messages). */
function where(src: string, at: number): string {
  const before = src.slice(0, at).split("\n");
  return `line ${before.length}, column ${before[before.length - 1]!.length + 1}`;
}

const NAME = /[A-Za-z_:][-A-Za-z0-9_:.]*/y;
const SPACE = /\s*/y;

/** The nodes of an XML document, top level first (prolog, comments, the root element). */
export function parseXml(src: string): XmlNode[] {
  let i = 0;
  const fail = (what: string, at = i): never => {
    throw new XmlError(`${what} at ${where(src, at)}`, at);
  };
  const skipSpace = () => {
    SPACE.lastIndex = i;
    SPACE.exec(src);
    i = SPACE.lastIndex;
  };
  const readName = (): string => {
    NAME.lastIndex = i;
    const m = NAME.exec(src);
    if (!m) fail("a name was expected");
    i = NAME.lastIndex;
    return m![0];
  };
  const until = (end: string, what: string): number => {
    const at = src.indexOf(end, i);
    if (at < 0) fail(`${what} is not closed`);
    return at + end.length;
  };

  const readNodes = (parent: string | undefined): XmlNode[] => {
    const nodes: XmlNode[] = [];
    while (i < src.length) {
      const start = i;
      if (src[i] !== "<") {
        const next = src.indexOf("<", i);
        i = next < 0 ? src.length : next;
        nodes.push({ type: "text", text: decodeEntities(src.slice(start, i)), start, end: i });
        continue;
      }
      if (src.startsWith("<!--", i)) {
        i = until("-->", "A comment");
        nodes.push({ type: "other", start, end: i });
      } else if (src.startsWith("<![CDATA[", i)) {
        i = until("]]>", "A CDATA section");
        nodes.push({ type: "text", text: src.slice(start + 9, i - 3), start, end: i });
      } else if (src.startsWith("<?", i)) {
        i = until("?>", "A processing instruction");
        nodes.push({ type: "other", start, end: i });
      } else if (src.startsWith("<!", i)) {
        // A doctype, perhaps with an internal subset in brackets.
        let depth = 0;
        i += 2;
        for (; i < src.length; i++) {
          const c = src[i];
          if (c === "[") depth++;
          else if (c === "]") depth--;
          else if (c === ">" && depth <= 0) break;
        }
        if (i >= src.length) fail("A declaration is not closed", start);
        i++;
        nodes.push({ type: "other", start, end: i });
      } else if (src[i + 1] === "/") {
        if (parent === undefined) fail("A closing tag has no opening tag");
        i += 2;
        const name = readName();
        if (name !== parent) fail(`</${name}> closes <${parent}>`, start);
        skipSpace();
        if (src[i] !== ">") fail(`</${name}> is not closed`);
        i++;
        return Object.assign(nodes, { closedAt: i });
      } else {
        nodes.push(readElement());
      }
    }
    if (parent !== undefined) fail(`<${parent}> is never closed`);
    return nodes;
  };

  const readElement = (): XmlElement => {
    const start = i;
    i++;
    const name = readName();
    const attrs: XmlAttr[] = [];
    for (;;) {
      const before = i;
      skipSpace();
      if (src.startsWith("/>", i)) {
        i += 2;
        return { type: "element", name, attrs, children: [], start, openEnd: i, end: i, selfClosing: true };
      }
      if (src[i] === ">") {
        i++;
        break;
      }
      if (i >= src.length) fail(`<${name}> is not closed`, start);
      if (i === before) fail(`a space was expected in <${name}>`);
      const attr = readName();
      skipSpace();
      if (src[i] !== "=") fail(`the attribute ${attr} of <${name}> has no value`);
      i++;
      skipSpace();
      const quote = src[i] ?? "";
      if (quote !== '"' && quote !== "'") fail(`the value of ${attr} is not quoted`);
      const close = src.indexOf(quote, i + 1);
      if (close < 0) fail(`the value of ${attr} is not closed`);
      const raw = src.slice(i + 1, close);
      if (raw.includes("<")) fail(`the value of ${attr} holds a <`, i);
      if (attrs.some(([n]) => n === attr)) fail(`<${name}> has ${attr} twice`, i);
      attrs.push([attr, decodeEntities(raw)]);
      i = close + 1;
    }
    const openEnd = i;
    const children = readNodes(name) as XmlNode[] & { closedAt?: number };
    return { type: "element", name, attrs, children, start, openEnd, end: children.closedAt ?? i, selfClosing: false };
  };

  return readNodes(undefined);
}

/** The value of attribute `name`, if the element has it. */
export function attr(el: XmlElement, name: string): string | undefined {
  return el.attrs.find(([n]) => n === name)?.[1];
}

/** All the text inside a node. */
export function textContent(node: XmlNode): string {
  if (node.type === "text") return node.text;
  if (node.type === "element") return node.children.map(textContent).join("");
  return "";
}
