// Fills an XForm in @getodk/xforms-engine, the engine of ODK Web Forms, the way a
// respondent does, and writes what the client would keep at each step: the same
// steps and files as tests/field/javarosa/FillForm.java (see there).
//
// Usage: node fill-form.mjs FORM.xml OUTDIR RUNS NAME=FIRST[/SECOND] ... [NAME!=BAD[|BAD...] ...]
//        node fill-form.mjs --jobs JOBS.tsv RESULTS.txt
// (an empty answer leaves a question empty; each BAD is given before each answer to
// NAME and must be refused, as in FillForm.java). The second form fills many forms in one
// Node process, with the jobs and results files of FillForm.java (see there).
//
// events-r.tsv also holds, for every question answered, its label (QUESTION ...) and a
// select's choice labels (CHOICES a | b | ...), as FillForm.java writes them.
//
// The engine has no screens: a respondent's pass over the form is a walk over its
// controls in document order; "going back" is the same walk in reverse. A draft is
// the instance payload the engine prepares before the form is complete (what a
// client stores to resume later); reopening it is restoreInstance.

import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { engine } from './engine.mjs';

// FORM OUTDIR RUNS NAME=... : every run of one form.
async function fillForm([formPath, outDir, runsText, ...pairs]) {
  const first = new Map();
  const second = new Map();
  const refused = new Map();
  let firstQuestion = null;
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    const name = pair.slice(0, eq);
    if (name.endsWith('!')) {
      const key = name.slice(0, -1);
      refused.set(key, pair.slice(eq + 1).split('|'));
      continue;
    }
    const [one, two] = pair.slice(eq + 1).split('/', 2);
    first.set(name, one);
    second.set(name, two ?? one);
    if (firstQuestion === null && name !== 'respondent_id' && name !== 'group') {
      firstQuestion = name;
    }
  }

  const xml = readFileSync(formPath, 'utf8');
  const form = await engine.loadForm(xml);
  if (form.status === 'failure') {
    throw form.error;
  }

  const nameOf = (node) => node.currentState.reference.split('/').pop();
  const controls = (root) => {
    const found = [];
    const walk = (node) => {
      if (['note', 'input', 'select'].includes(node.nodeType)) {
        found.push(node);
      }
      for (const child of node.currentState.children ?? []) {
        walk(child);
      }
    };
    walk(root);
    return found;
  };

  async function payloadXML(root) {
    const payload = await root.prepareInstancePayload();
    return { payload, xml: await payload.data[0].get('xml_submission_file').text() };
  }

  function filler(run) {
    const lines = [];
    const log = (step, name, text) => {
      lines.push(`${step}\t${name}\t${String(text).replaceAll('\n', '\\n')}`);
    };
    const answer = (node, step, value) => {
      if (value === undefined) {
        throw new Error(`no answer given for ${nameOf(node)}`);
      }
      // What the respondent reads: the question's label and, for a select, its choices.
      log(step, nameOf(node), `QUESTION ${node.currentState.label?.asString ?? ''}`);
      if (node.nodeType === 'select') {
        const choices = node.currentState.valueOptions.map((option) => option.label.asString);
        log(step, nameOf(node), `CHOICES ${choices.join(' | ')}`);
      }
      const give = (given) => {
        if (node.nodeType !== 'select') {
          node.setValue(given);
        } else if (given === '') {
          node.selectValue(null);
        } else {
          if (node.getValueOption(given) === null) {
            throw new Error(`${nameOf(node)} has no choice ${given}`);
          }
          node.selectValue(given);
        }
      };
      for (const bad of refused.get(nameOf(node)) ?? []) {
        give(bad);
        if (node.validationState.violation === null) {
          throw new Error(`${nameOf(node)} accepted ${bad}`);
        }
        log(step, nameOf(node), `REFUSED ${bad}`);
      }
      give(value);
      const violation = node.validationState.violation;
      if (violation !== null) {
        log(step, nameOf(node), `REFUSED ${violation.condition} ${value}`);
        throw new Error(`${nameOf(node)} refused ${value} (${violation.condition})`);
      }
      log(step, nameOf(node), `ANSWER ${value}`);
    };
    const visit = (node, step, answers) => {
      if (!node.currentState.relevant) {
        return;
      }
      if (node.nodeType === 'note') {
        log(step, nameOf(node), node.currentState.label?.asString ?? '');
      } else {
        answer(node, step, answers.get(nameOf(node)));
      }
    };
    // Clear the first question, show the notes just before it again, answer again.
    const clearAndAnswerAgain = async (root, step) => {
      const nodes = controls(root);
      const index = nodes.findIndex((node) => nameOf(node) === firstQuestion);
      if (nodes[index].nodeType === 'select') {
        nodes[index].selectValue(null);
      } else {
        nodes[index].setValue('');
      }
      writeFileSync(join(outDir, `${step}-cleared-${run}.xml`), (await payloadXML(root)).xml);
      const shown = [];
      for (let i = index - 1; i >= 0 && nodes[i].nodeType === 'note'; i--) {
        if (nodes[i].currentState.relevant) {
          shown.unshift(nodes[i]);
        }
      }
      for (const note of shown) {
        log(step, nameOf(note), note.currentState.label?.asString ?? '');
      }
      answer(nodes[index], step, second.get(firstQuestion));
    };
    return { lines, visit, clearAndAnswerAgain };
  }

  const runs = Number(runsText);
  for (let run = 1; run <= runs; run++) {
    const { lines, visit, clearAndAnswerAgain } = filler(run);
    const instance = form.createInstance();
    const root = instance.root;
    writeFileSync(join(outDir, `start-${run}.xml`), (await payloadXML(root)).xml);
    for (const node of controls(root)) {
      visit(node, 'fill', first);
    }
    for (const node of controls(root).reverse()) {
      if (node.nodeType === 'note' && node.currentState.relevant) {
        lines.push(`back\t${nameOf(node)}\t${(node.currentState.label?.asString ?? '').replaceAll('\n', '\\n')}`);
      }
    }
    await clearAndAnswerAgain(root, 'again');
    const draft = await payloadXML(root);
    writeFileSync(join(outDir, `answered-${run}.xml`), draft.xml);

    const reopened = await form.restoreInstance({ data: draft.payload.data });
    await clearAndAnswerAgain(reopened.root, 'reopen');
    const final = await payloadXML(reopened.root);
    if (final.payload.status !== 'ready' || (final.payload.violations ?? []).length > 0) {
      throw new Error(`form is not complete: ${final.payload.status}`);
    }
    writeFileSync(join(outDir, `submission-${run}.xml`), final.xml);
    writeFileSync(join(outDir, `events-${run}.tsv`), lines.join('\n') + '\n');
  }
}

if (process.argv[2] === '--jobs') {
  const [, jobsPath, resultsPath] = process.argv.slice(2);
  const results = [];
  for (const job of readFileSync(jobsPath, 'utf8').split('\n')) {
    if (job === '') {
      continue;
    }
    try {
      await fillForm(job.split('\t'));
      results.push('OK');
    } catch (error) {
      results.push(`ERROR\t${String(error).replaceAll('\n', '\\n')}`);
    }
  }
  writeFileSync(resultsPath, results.join('\n') + '\n');
} else {
  await fillForm(process.argv.slice(2));
}
