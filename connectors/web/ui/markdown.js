// Markdown-ish rendering of the bot's messages into DOM nodes. Every piece
// of message text becomes a text node (never HTML), so nothing a message
// says can become markup or script.
'use strict';

(function () {
  const FENCE = /^\s*```/;

  // render returns a fragment for text: fenced code blocks (an unclosed one
  // runs to the end, as while an answer is still streaming), headings,
  // lists, quotes and paragraphs with inline code, bold, emphasis, links
  // and mentions.
  function render(text) {
    const frag = document.createDocumentFragment();
    const lines = String(text || '').replace(/\r\n?/g, '\n').split('\n');
    let i = 0;
    while (i < lines.length) {
      const line = lines[i];
      if (FENCE.test(line)) {
        i = codeBlock(frag, lines, i);
      } else if (/^\s*$/.test(line)) {
        i++;
      } else if (/^#{1,6}\s/.test(line)) {
        const h = el('div', 'md-h');
        inline(h, line.replace(/^#{1,6}\s+/, ''));
        frag.appendChild(h);
        i++;
      } else if (/^\s*([-*•]|\d+[.)])\s+/.test(line)) {
        i = list(frag, lines, i);
      } else if (/^\s*>/.test(line)) {
        i = block(frag, lines, i, 'blockquote', 'md-quote', l => /^\s*>/.test(l), l => l.replace(/^\s*>\s?/, ''));
      } else {
        i = block(frag, lines, i, 'p', 'md-p', l => !/^\s*$/.test(l) && !FENCE.test(l) && !/^\s*([-*•]|\d+[.)])\s+/.test(l) && !/^\s*>/.test(l) && !/^#{1,6}\s/.test(l), l => l);
      }
    }
    return frag;
  }

  function el(tag, cls) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    return e;
  }

  // codeBlock reads a fenced block. As in CommonMark, it closes only on a
  // fence of at least as many backticks as opened it, so a block can show
  // a line of three backticks (an approval card showing a command that
  // holds one) without its end being taken for the block's.
  function codeBlock(frag, lines, i) {
    const open = lines[i].match(/^\s*(`{3,})/)[1].length;
    const lang = lines[i].replace(/^\s*`{3,}/, '').trim();
    const closes = l => { const m = l.match(/^\s*(`{3,})\s*$/); return m && m[1].length >= open; };
    const body = [];
    i++;
    while (i < lines.length && !closes(lines[i])) {
      body.push(lines[i]);
      i++;
    }
    const pre = el('pre', 'md-code');
    const code = el('code');
    if (lang) pre.dataset.lang = lang;
    code.textContent = body.join('\n');
    pre.appendChild(code);
    frag.appendChild(lang === 'output' ? collapsed(pre, body.length) : pre);
    return i + 1; // past the closing fence (or the end)
  }

  // collapsed folds a command's output excerpt (a block fenced as
  // "output", as the bot's "What ran" list does) under a one-line summary:
  // the list of commands stays readable, the output is a click away.
  function collapsed(pre, lines) {
    const d = el('details', 'md-output');
    const s = el('summary');
    s.textContent = 'output · ' + lines + (lines === 1 ? ' line' : ' lines');
    d.appendChild(s);
    d.appendChild(pre);
    return d;
  }

  function block(frag, lines, i, tag, cls, belongs, strip) {
    const b = el(tag, cls);
    const parts = [];
    while (i < lines.length && belongs(lines[i])) {
      parts.push(strip(lines[i]));
      i++;
    }
    inline(b, parts.join('\n'));
    frag.appendChild(b);
    return i;
  }

  function list(frag, lines, i) {
    const ordered = /^\s*\d+[.)]\s/.test(lines[i]);
    const ul = el(ordered ? 'ol' : 'ul', 'md-list');
    const item = ordered ? /^\s*\d+[.)]\s+/ : /^\s*[-*•]\s+/;
    while (i < lines.length && item.test(lines[i])) {
      const li = el('li');
      inline(li, lines[i].replace(item, ''));
      ul.appendChild(li);
      i++;
    }
    frag.appendChild(ul);
    return i;
  }

  // INLINE finds the marked-up spans of a line. Emphasis needs a non-word
  // character on its outer sides, so snake_case and globs (*.log) stay as
  // written.
  const INLINE = new RegExp([
    /(?<code>`[^`\n]+`)/.source,
    /(?<strong>\*\*[^*\n]+\*\*)/.source,
    /(?<link>https?:\/\/[^\s<>()"'`]+[^\s<>()"'`.,;:!?])/.source,
    /(?<em>(?<![\w*])\*(?![\s*])[^*\n]+?(?<!\s)\*(?![\w*])|(?<![\w_])_(?![\s_])[^_\n]+?(?<!\s)_(?![\w_]))/.source,
    /(?<mention>(?:^|(?<=[\s(]))@[\w.-]*\w)/.source,
  ].join('|'), 'g');

  // inline appends text to parent with inline code, bold, emphasis,
  // http(s) links and @mentions marked up; the rest is plain text.
  function inline(parent, text) {
    let last = 0;
    for (const m of String(text).matchAll(INLINE)) {
      if (m.index > last) parent.appendChild(document.createTextNode(text.slice(last, m.index)));
      parent.appendChild(token(m.groups));
      last = m.index + m[0].length;
    }
    if (last < text.length) parent.appendChild(document.createTextNode(text.slice(last)));
    return parent;
  }

  function token(g) {
    if (g.code) return textEl('code', 'md-inline', g.code.slice(1, -1));
    if (g.strong) return textEl('strong', '', g.strong.slice(2, -2));
    if (g.em) return textEl('em', '', g.em.slice(1, -1));
    if (g.link) {
      const a = textEl('a', '', g.link);
      a.href = g.link; // only http(s): the pattern admits nothing else
      a.target = '_blank';
      a.rel = 'noopener noreferrer';
      return a;
    }
    return textEl('span', 'mention', g.mention);
  }

  function textEl(tag, cls, text) {
    const e = el(tag, cls);
    e.textContent = text;
    return e;
  }

  window.opsbotMarkdown = { render, inline };
})();
