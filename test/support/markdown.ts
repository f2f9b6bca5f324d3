/**
 * Just enough Markdown for the docs tests: fenced code blocks (with the HTML comment before each), the
 * anchors GitHub gives headings, and relative links. Not a full CommonMark parser: the docs are written
 * plainly (fences of three backticks, inline links), and the tests fail loudly on what they cannot read.
 */

export interface FencedBlock {
  /** The info string's first word (`bash`, `ts`, `json`, ...), '' when there is none. */
  lang: string;
  code: string;
  /** 1-based line of the opening fence. */
  line: number;
  /** The HTML comment on the last non-blank line before the fence (`<!-- ... -->`'s text), if any. */
  marker: string | undefined;
}

const FENCE = /^(\s*)(`{3,}|~{3,})\s*([^\s`]*)/;

/** Every fenced code block, in order. */
export function fencedBlocks(markdown: string): FencedBlock[] {
  const lines = markdown.split('\n');
  const blocks: FencedBlock[] = [];
  let open:
    { fence: string; indent: string; lang: string; line: number; marker: string | undefined } | undefined;
  let body: string[] = [];
  let lastNonBlank = '';
  lines.forEach((text, index) => {
    if (open) {
      if (text.trim().startsWith(open.fence) && text.trim().replace(/[`~]/g, '') === '') {
        blocks.push({ lang: open.lang, code: body.join('\n'), line: open.line, marker: open.marker });
        open = undefined;
        lastNonBlank = text;
      } else {
        body.push(open.indent && text.startsWith(open.indent) ? text.slice(open.indent.length) : text);
      }
      return;
    }
    const fence = FENCE.exec(text);
    if (fence) {
      const comment = /^\s*<!--\s*([\s\S]*?)\s*-->\s*$/.exec(lastNonBlank);
      open = {
        fence: fence[2]!,
        indent: fence[1]!,
        lang: fence[3] ?? '',
        line: index + 1,
        marker: comment?.[1],
      };
      body = [];
      return;
    }
    if (text.trim() !== '') lastNonBlank = text;
  });
  if (open) throw new Error(`unclosed code fence at line ${open.line}`);
  return blocks;
}

/** The lines outside fenced code blocks, with their 1-based numbers. */
export function proseLines(markdown: string): { text: string; line: number }[] {
  const out: { text: string; line: number }[] = [];
  let fence: string | undefined;
  markdown.split('\n').forEach((text, index) => {
    const match = FENCE.exec(text);
    if (fence) {
      if (match && text.trim().startsWith(fence) && text.trim().replace(/[`~]/g, '') === '')
        fence = undefined;
      return;
    }
    if (match) {
      fence = match[2]!;
      return;
    }
    out.push({ text, line: index + 1 });
  });
  return out;
}

/** The anchor GitHub gives a heading's text (github-slugger's rule, without duplicates handled). */
export function githubSlug(heading: string): string {
  return heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** Every heading anchor of a document (a repeated heading gets `-1`, `-2`, ... as on GitHub). */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const { text } of proseLines(markdown)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(text);
    if (!heading) continue;
    const slug = githubSlug(heading[1]!);
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

/**
 * Where the section under the heading with `anchor` is: the heading's line and the line of the next heading
 * of its level or above (or one past the end), both 1-based.
 */
export function markdownSection(markdown: string, anchor: string): { start: number; end: number } {
  const headings = proseLines(markdown).flatMap(({ text, line }) => {
    const heading = /^(#{1,6})\s+(.*?)\s*#*\s*$/.exec(text);
    return heading ? [{ level: heading[1]!.length, slug: githubSlug(heading[2]!), line }] : [];
  });
  const index = headings.findIndex((heading) => heading.slug === anchor);
  if (index < 0) throw new Error(`no heading with the anchor #${anchor}`);
  const { level, line } = headings[index]!;
  const next = headings.slice(index + 1).find((heading) => heading.level <= level);
  return { start: line, end: next?.line ?? markdown.split('\n').length + 1 };
}

/** Paragraphs of prose (runs of non-blank lines outside fenced blocks), joined by spaces: code spans and
 * links may wrap across lines. */
export function proseParagraphs(markdown: string): { text: string; line: number }[] {
  const paragraphs: { text: string; line: number }[] = [];
  let current: { parts: string[]; line: number } | undefined;
  let previous = -1;
  for (const { text, line } of proseLines(markdown)) {
    const blank = text.trim() === '';
    if (current && (blank || line !== previous + 1)) {
      paragraphs.push({ text: current.parts.join(' '), line: current.line });
      current = undefined;
    }
    if (!blank) {
      current ??= { parts: [], line };
      current.parts.push(text.trim());
    }
    previous = line;
  }
  if (current) paragraphs.push({ text: current.parts.join(' '), line: current.line });
  return paragraphs;
}

export interface MarkdownLink {
  target: string;
  /** The line where the link's paragraph starts. */
  line: number;
  image: boolean;
}

/** Inline links and images outside code (fenced blocks and `code spans`). */
export function markdownLinks(markdown: string): MarkdownLink[] {
  const links: MarkdownLink[] = [];
  for (const { text, line } of proseParagraphs(markdown)) {
    const withoutCode = text.replace(/`[^`]*`/g, '');
    for (const match of withoutCode.matchAll(/(!?)\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      links.push({ target: match[2]!, line, image: match[1] === '!' });
    }
  }
  return links;
}

/** `code spans` of the prose (outside fenced blocks). */
export function codeSpans(markdown: string): { text: string; line: number }[] {
  const spans: { text: string; line: number }[] = [];
  for (const { text, line } of proseParagraphs(markdown)) {
    for (const match of text.matchAll(/`([^`]+)`/g)) spans.push({ text: match[1]!, line });
  }
  return spans;
}
