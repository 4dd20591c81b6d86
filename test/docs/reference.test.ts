/**
 * The docs hold together: docs/cli.md is what the commands define (as
 * scripts/cli-reference.js writes it), and every relative link in README.md
 * and docs/*.md reaches an existing file and, with #anchor, a heading of it.
 * Needs dist/ built (npm test builds first).
 */
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { anchor, cliReference, REFERENCE_PATH } from '../../scripts/cli-reference.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** README.md and every page under docs/. */
function pages(): string[] {
  return ['README.md', ...readdirSync(join(root, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)];
}

/** The text outside fenced code blocks, code spans blanked (so a `[x](y)` or `# x` in code is neither a link nor a heading). */
function prose(markdown: string): string[] {
  const lines: string[] = [];
  let fence: string | undefined;
  for (const line of markdown.split('\n')) {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence !== undefined) {
      if (marker !== undefined && marker[0] === fence[0] && marker.length >= fence.length) fence = undefined;
      lines.push('');
    } else if (marker !== undefined) {
      fence = marker;
      lines.push('');
    } else {
      lines.push(line.replace(/`[^`]*`/g, (span) => (span.includes('](') ? span : 'x'.repeat(span.length))));
    }
  }
  return lines;
}

/** The anchors of a page's headings, as GitHub makes them (a repeated one gets -1, -2, …). */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const found = new Set<string>();
  const lines = markdown.split('\n');
  prose(markdown).forEach((line, index) => {
    if (!/^#{1,6}\s/.test(line)) return;
    const text = lines[index]!.replace(/^#{1,6}\s+/, '').replace(/\s+#+\s*$/, '').replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').trim();
    const base = anchor(text);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    found.add(count === 0 ? base : `${base}-${count}`);
  });
  return found;
}

/** Every relative link of a page: its target as written, and the line it is on. */
function links(markdown: string): { target: string; line: number }[] {
  const text = prose(markdown).join('\n');
  const found: { target: string; line: number }[] = [];
  for (const match of text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
    const target = match[1]!;
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto:
    found.push({ target, line: text.slice(0, match.index).split('\n').length });
  }
  return found;
}

describe('the docs', () => {
  it(`${REFERENCE_PATH} is what the commands define`, async () => {
    const expected = await cliReference(root);
    const current = existsSync(join(root, REFERENCE_PATH)) ? readFileSync(join(root, REFERENCE_PATH), 'utf8') : '';
    expect(current, `${REFERENCE_PATH} is stale: run \`npm run docs:cli\` (after changing a command's flags, summary, description or examples) and commit it`).toBe(expected);
  });

  it('every relative link in README.md and docs/*.md reaches a file, and a heading of it', () => {
    const broken: string[] = [];
    const headings = new Map<string, Set<string>>();
    const headingsOf = (path: string) => {
      if (!headings.has(path)) headings.set(path, anchors(readFileSync(path, 'utf8')));
      return headings.get(path)!;
    };
    for (const page of pages()) {
      const from = join(root, page);
      for (const { target, line } of links(readFileSync(from, 'utf8'))) {
        const [file = '', hash] = target.split('#') as [string, string | undefined];
        const path = file === '' ? from : resolve(dirname(from), decodeURIComponent(file));
        const where = `${page}:${line}: ${target}`;
        if (!existsSync(path)) {
          broken.push(`${where}: no such file ${relative(root, path)}`);
        } else if (hash !== undefined && hash !== '') {
          if (!path.endsWith('.md') || statSync(path).isDirectory()) broken.push(`${where}: an #anchor into a file that is not markdown`);
          else if (!headingsOf(path).has(decodeURIComponent(hash))) broken.push(`${where}: ${relative(root, path)} has no heading with the anchor #${hash}`);
        }
      }
    }
    expect(broken, 'links that lead nowhere').toEqual([]);
  });
});
