// What the editor does not understand is drawn inline in the app's page, so
// it is cleaned twice: by clean.ts on its own parse, then by DOMPurify's SVG
// profile (an instance of its own,
// so these hooks do not touch the chat's Markdown): no scripts or event
// handlers, no foreignObject, no style (the page's CSP refuses style
// attributes, and a <style> would restyle the app), and no reference
// outside the document (only `#id` links and data: images).
import DOMPurify from "dompurify";
import { cleanMarkup, safeAttr } from "./clean";
import { SVG_NS } from "./model";

let purifier: ReturnType<typeof DOMPurify> | undefined;
const cache = new Map<string, DocumentFragment>();

function instance() {
  if (purifier) return purifier;
  const p = DOMPurify(window);
  p.addHook("uponSanitizeAttribute", (_node, data) => {
    if (!safeAttr(data.attrName, data.attrValue)) data.keepAttr = false;
  });
  purifier = p;
  return p;
}

/** `markup` (SVG elements, as in a file) made safe to show, as nodes to append to an SVG element. */
export function sanitizeSvg(markup: string): DocumentFragment {
  let clean = cache.get(markup);
  if (!clean) {
    const wrapped = instance().sanitize(`<svg xmlns="${SVG_NS}">${cleanMarkup(markup)}</svg>`, {
      USE_PROFILES: { svg: true, svgFilters: true },
      FORBID_TAGS: ["script", "style", "foreignObject", "iframe", "a"],
      FORBID_ATTR: ["style"],
      RETURN_DOM_FRAGMENT: true,
    });
    clean = document.createDocumentFragment();
    const svg = wrapped.firstElementChild;
    if (svg) clean.append(...Array.from(svg.childNodes));
    if (cache.size > 500) cache.clear();
    cache.set(markup, clean);
  }
  return clean.cloneNode(true) as DocumentFragment;
}
