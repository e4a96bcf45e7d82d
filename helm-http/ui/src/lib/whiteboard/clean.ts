// A first pass over markup the editor does not understand, before DOMPurify
// (sanitize.ts): event handlers, scripts, styles, foreignObject and outside
// references never reach a parser in the page. (Even an inert parse of an
// `onclick` makes Chromium report a CSP violation.) Pure, so it is tested
// in node.
import { escapeAttr, escapeText, parseXml, type XmlNode } from "./xml";

const DROP = new Set(["script", "style", "foreignObject", "iframe", "object", "embed", "handler", "listener"]);
const LOCAL_REF = /^#[-\w.:]+$/;
const DATA_IMAGE = /^data:image\/(png|jpeg|gif|webp);base64,[a-z0-9+/=\s]+$/i;
const LOCAL_URL = /^url\(\s*(['"]?)#[-\w.:]+\1\s*\)$/i;

/** Whether attribute `name` with `value` may be drawn in the page. */
export function safeAttr(name: string, value: string): boolean {
  const local = name.replace(/^.*:/, "").toLowerCase();
  if (local.startsWith("on") || local === "style") return false;
  const v = value.trim();
  if (local === "href" || local === "src") return LOCAL_REF.test(v) || DATA_IMAGE.test(v);
  if (/url\s*\(/i.test(v) || /javascript:/i.test(v)) return LOCAL_URL.test(v);
  return true;
}

function write(node: XmlNode): string {
  if (node.type === "text") return escapeText(node.text);
  if (node.type !== "element") return "";
  const local = node.name.replace(/^.*:/, "");
  if (DROP.has(local)) return "";
  let out = `<${node.name}`;
  for (const [k, v] of node.attrs) if (safeAttr(k, v)) out += ` ${k}="${escapeAttr(v)}"`;
  return `${out}>${node.children.map(write).join("")}</${node.name}>`;
}

/** `markup` without what may not be drawn in the page; "" if it does not parse. */
export function cleanMarkup(markup: string): string {
  try {
    return parseXml(markup).map(write).join("");
  } catch {
    return "";
  }
}
