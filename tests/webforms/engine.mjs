// @getodk/xforms-engine, the engine of ODK Web Forms, loaded under Node for the harnesses
// (fill-form.mjs, show-text.mjs): `import { engine } from './engine.mjs'`.

import { JSDOM } from 'jsdom';

// The engine expects a browser: give it jsdom's window, and hide Node's `process` while
// it loads so that it takes its browser code paths.
const dom = new JSDOM('<!doctype html><html><body></body></html>', { url: 'http://localhost/' });
for (const key of Object.getOwnPropertyNames(dom.window)) {
  if (!(key in globalThis)) {
    try {
      globalThis[key] = dom.window[key];
    } catch {
      // read-only globals stay Node's
    }
  }
}
const nodeProcess = globalThis.process;
delete globalThis.process;
let loaded;
try {
  loaded = await import('@getodk/xforms-engine');
} finally {
  globalThis.process = nodeProcess;
}

export const engine = loaded;
