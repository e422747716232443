// Prints every text of an XForm as @getodk/xforms-engine, the engine of ODK Web Forms,
// hands it to the page: for every note and question (relevant or not) its label, hint,
// choice labels and constraint message, each as the plain string (asString) and as the
// engine formats it for display (`formatted`: the Markdown and HTML it recognized).
// The same output as tests/field/javarosa/ShowText.java (see there), with the roles
// label, hint, choice, constraint and, for the display, label.shown, hint.shown,
// choice.shown, constraint.shown.
//
// Usage: node show-text.mjs FORM.xml ...
//
// A displayed text is written as the reader sees it: text as text, a line break as a
// line feed, paragraphs separated by an empty line; any other formatting the engine
// applied is written as a mark around its content (⟦em⟧...⟦/em⟧, ⟦a href=...⟧...⟦/a⟧,
// ⟦h1⟧...⟦/h1⟧, ⟦li⟧...⟦/li⟧, raw HTML as ⟦html⟧...⟦/html⟧), so that a text shown
// literally reads back exactly and a text the engine formatted does not.

import { readFileSync } from 'node:fs';
import { engine } from './engine.mjs';

const escape = (text) => String(text).replaceAll('\\', '\\\\').replaceAll('\n', '\\n')
  .replaceAll('\r', '\\r').replaceAll('\t', '\\t');
const lines = [];
const print = (name, role, text) => {
  if (text !== null && text !== undefined) {
    lines.push(`${name}\t${role}\t${escape(text)}`);
  }
};

const BLOCKS = new Set(['p', 'div', 'ul', 'ol', 'li', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6']);
function shown(nodes) {
  let text = '';
  nodes.forEach((node, i) => {
    if (node.role === 'child') {
      text += node.value;
    } else if (node.role === 'line-break') {
      text += '\n';
    } else if (node.role === 'html') {
      text += `⟦html⟧${node.unsafeHtml}⟦/html⟧`;
    } else {
      const inner = shown(node.children);
      if (node.elementName === 'p') {
        text += inner;
      } else {
        const url = node.url === undefined ? '' : ` href=${node.url}`;
        text += `⟦${node.elementName}${url}⟧${inner}⟦/${node.elementName}⟧`;
      }
      if (BLOCKS.has(node.elementName) && i < nodes.length - 1) {
        text += '\n\n';
      }
    }
  });
  return text;
}

const both = (name, role, range) => {
  if (range) {
    print(name, role, range.asString);
    print(name, `${role}.shown`, shown(range.formatted));
  }
};

const walk = (node) => {
  if (['note', 'input', 'select'].includes(node.nodeType)) {
    const name = node.currentState.reference.split('/').pop();
    both(name, 'label', node.currentState.label);
    both(name, 'hint', node.currentState.hint);
    for (const option of node.currentState.valueOptions ?? []) {
      both(name, 'choice', option.label);
    }
    if (node.nodeType === 'input') {
      // a constraint message is shown when a value breaks the constraint
      node.setValue('\u0001 not a value of this field');
      const violation = node.validationState.violation;
      if (violation?.condition === 'constraint') {
        both(name, 'constraint', violation.message);
      }
      node.setValue('');
    }
  }
  for (const child of node.currentState.children ?? []) {
    walk(child);
  }
};
for (const path of process.argv.slice(2)) {
  lines.push(`\tform\t${path}`);
  const form = await engine.loadForm(readFileSync(path, 'utf8'));
  if (form.status === 'failure') {
    throw form.error;
  }
  walk(form.createInstance().root);
}
process.stdout.write(lines.join('\n') + '\n');
