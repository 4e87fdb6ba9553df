// The opsbot web chat: channels, threads, messages that grow as the bot
// writes them (Server-Sent Events), buttons, and a name per browser.
'use strict';

(function () {
  const $ = sel => document.querySelector(sel);
  const md = window.opsbotMarkdown;

  const state = {
    user: localStorage.getItem('opsbot.user') || '',
    // client names this tab's event stream, so replies meant for the
    // clicker alone (notices) reach this tab only.
    client: 'c-' + Math.random().toString(36).slice(2) + Date.now().toString(36),
    channels: [],
    channel: '',
    thread: '',
    threads: new Map(), // channel → Map(thread id → thread view)
    messages: new Map(), // message id → message view (open thread)
    unread: new Set(), // thread ids with news not yet seen
    // signedIn: the server knows who this is (a personal key or a
    // signing-in proxy); the name is then its, not chosen here.
    signedIn: false,
    threadsNext: '', // cursor of the channel's next page of older threads
    messagesNext: '', // cursor of the open thread's earlier messages
    seq: 0,
    es: null,
  };

  // ---- API ------------------------------------------------------------

  async function api(method, path, body) {
    const opts = { method, headers: { 'X-Request-Id': requestId() } };
    if (body !== undefined) {
      opts.headers['Content-Type'] = 'application/json';
      opts.body = JSON.stringify(body);
    }
    const res = await fetch(path, opts);
    if (res.status === 401) {
      await askKey();
      return api(method, path, body);
    }
    const data = await res.json().catch(() => ({}));
    if (!res.ok) throw new Error(data.error || res.status + ' ' + res.statusText);
    return data;
  }

  function requestId() {
    return 'web-' + Math.random().toString(36).slice(2, 12);
  }

  function askKey() {
    return new Promise(resolve => {
      const dlg = $('#key-dialog');
      const form = $('#key-form');
      form.onsubmit = ev => {
        ev.preventDefault();
        const key = form.key.value.trim();
        if (!key) return;
        document.cookie = 'opsbot_key=' + encodeURIComponent(key) + '; path=/; max-age=31536000; SameSite=Strict';
        dlg.close();
        resolve();
      };
      dlg.oncancel = ev => ev.preventDefault(); // the API needs the key
      if (!dlg.open) dlg.showModal();
    });
  }

  // ---- the user's name ------------------------------------------------

  function nameProblem(name) {
    if (!name) return 'Pick a name.';
    if (name.length > 40) return 'At most 40 characters.';
    if (name.toLowerCase() === 'opsbot') return 'That is the bot’s name.';
    return '';
  }

  function askName() {
    return new Promise(resolve => {
      const dlg = $('#name-dialog');
      const form = $('#name-form');
      form.name.value = state.user;
      form.onsubmit = ev => {
        ev.preventDefault();
        const name = form.name.value.trim();
        const problem = nameProblem(name);
        $('#name-error').textContent = problem;
        if (problem) return;
        state.user = name;
        localStorage.setItem('opsbot.user', name);
        showUser();
        dlg.close();
        resolve();
      };
      // Escape must not leave the page without a name.
      dlg.oncancel = ev => { if (!state.user) ev.preventDefault(); };
      dlg.showModal();
      form.name.focus();
    });
  }

  function showUser() {
    $('#who').textContent = state.user ? '@' + state.user : '';
    if (state.signedIn) $('#who').title = 'Signed in as ' + state.user;
  }

  // screenful is how many list items fill the window: a list asks for one
  // screen at a time, and more on request.
  function screenful(itemHeight) {
    return Math.min(200, Math.max(10, Math.ceil(window.innerHeight / itemHeight) + 5));
  }

  // moreButton is the "older" button closing a paged list.
  function moreButton(label, onclick) {
    const b = document.createElement('button');
    b.type = 'button';
    b.className = 'link more';
    b.textContent = label;
    b.addEventListener('click', async () => {
      b.disabled = true;
      try { await onclick(); } catch (err) { b.disabled = false; notice({ text: err.message, error: true }); }
    });
    return b;
  }

  // ---- the event stream -------------------------------------------------

  function connect() {
    const q = new URLSearchParams({ since: String(state.seq), client: state.client });
    const es = new EventSource('/api/events?' + q);
    state.es = es;
    es.addEventListener('ready', () => setConn(true));
    es.addEventListener('message', ev => upsert(JSON.parse(ev.data)));
    es.addEventListener('notice', ev => notice(JSON.parse(ev.data)));
    es.onerror = () => {
      setConn(false);
      if (es.readyState === EventSource.CLOSED) { // refused, e.g. 401: start over
        setTimeout(() => { if (state.es === es) connect(); }, 3000);
      }
    };
  }

  // waiting says in the header what the page waits for before it is live.
  function waiting(text, title) {
    const c = $('#conn');
    c.textContent = text;
    c.title = title;
  }

  function setConn(live) {
    const c = $('#conn');
    c.textContent = live ? 'live' : 'reconnecting…';
    c.title = live ? 'Connected: updates arrive as they happen' : 'Lost the connection; reconnecting';
    c.classList.toggle('live', live);
    document.body.dataset.live = live ? '1' : '';
  }

  // upsert takes a message update from the stream into the views.
  function upsert(m) {
    state.seq = Math.max(state.seq, m.seq);
    if (!state.channels.includes(m.channel)) {
      state.channels.push(m.channel);
      renderChannels();
    }
    const threads = state.threads.get(m.channel);
    if (threads) updateThreadList(threads, m);
    if (m.thread === state.thread) {
      const old = state.messages.get(m.id);
      if (old && old.seq > m.seq) return; // a replay of an older state
      state.messages.set(m.id, m);
      placeMessage(m);
    } else if (m.user !== state.user) {
      state.unread.add(m.thread);
    }
    if (m.channel === state.channel) renderThreads();
    renderChannels();
  }

  // updateThreadList counts a reply only if it was posted after the list
  // was fetched (its id number, the seq it was posted at, is above the
  // list's base) and was not counted yet: replays and edits come again.
  function updateThreadList(threads, m) {
    let t = threads.get(m.thread);
    if (!t && m.id === m.thread) {
      t = { id: m.id, channel: m.channel, root: m, replies: 0, seq: m.seq, updated: m.updated, base: idNumber(m.id) };
      threads.set(m.id, t);
    }
    if (!t) return;
    if (m.id === m.thread) t.root = m;
    t.seen = t.seen || new Set();
    if (m.id !== m.thread && idNumber(m.id) > t.base && !t.seen.has(m.id)) {
      t.seen.add(m.id);
      t.replies++;
    }
    if (m.seq > t.seq) {
      t.seq = m.seq;
      t.updated = m.updated;
    }
  }

  function idNumber(id) {
    return Number(String(id).replace(/^m/, '')) || 0;
  }

  // ---- channels and threads -----------------------------------------------

  function renderChannels() {
    const ul = $('#channel-list');
    ul.replaceChildren(...state.channels.map(name => {
      const li = document.createElement('li');
      const a = document.createElement('a');
      a.href = '#/' + encodeURIComponent(name);
      a.dataset.channel = name;
      a.textContent = '# ' + name;
      a.classList.toggle('active', name === state.channel);
      a.classList.toggle('unread', [...state.unread].some(id => threadChannel(id) === name));
      li.appendChild(a);
      return li;
    }));
  }

  function threadChannel(id) {
    for (const [ch, threads] of state.threads) if (threads.has(id)) return ch;
    return '';
  }

  async function openChannel(name) {
    state.channel = name;
    $('#channel-title').textContent = '# ' + name;
    renderChannels();
    state.threads.set(name, new Map());
    state.threadsNext = '';
    await moreThreads(name);
  }

  // moreThreads fetches the channel's next screen of threads.
  async function moreThreads(name) {
    const q = new URLSearchParams({ limit: String(screenful(56)) });
    if (state.threadsNext) q.set('cursor', state.threadsNext);
    const data = await api('GET', '/api/channels/' + encodeURIComponent(name) + '/threads?' + q);
    if (state.channel !== name) return;
    const threads = state.threads.get(name);
    for (const t of data.threads) if (!threads.has(t.id)) threads.set(t.id, Object.assign(t, { base: data.seq }));
    state.threadsNext = data.next_cursor || '';
    renderThreads();
  }

  function renderThreads() {
    const threads = [...(state.threads.get(state.channel) || new Map()).values()];
    threads.sort((a, b) => b.seq - a.seq);
    const items = threads.map(threadItem);
    if (state.threadsNext) {
      const li = document.createElement('li');
      li.appendChild(moreButton('Older threads…', () => moreThreads(state.channel)));
      items.push(li);
    }
    $('#thread-list').replaceChildren(...items);
  }

  function threadItem(t) {
    const li = document.createElement('li');
    const a = document.createElement('a');
    a.href = '#/' + encodeURIComponent(t.channel) + '/' + encodeURIComponent(t.id);
    a.dataset.thread = t.id;
    a.classList.toggle('active', t.id === state.thread);
    a.classList.toggle('unread', state.unread.has(t.id));
    const who = document.createElement('span');
    who.className = 'who';
    who.textContent = t.root.bot ? 'opsbot' : t.root.user;
    const when = document.createElement('time');
    when.textContent = clock(t.updated);
    const text = document.createElement('span');
    text.className = 'preview';
    text.textContent = preview(t.root.text || t.root.context || '');
    drawSymbols(text);
    const replies = document.createElement('span');
    replies.className = 'replies';
    replies.textContent = t.replies === 1 ? '1 reply' : t.replies + ' replies';
    a.append(who, when, text, replies);
    li.appendChild(a);
    return li;
  }

  // preview is a message's first line without markdown's marks.
  function preview(text) {
    return text.replace(/^\s*```.*$/m, '').trim().split('\n')[0].replace(/\*\*|`/g, '');
  }

  // openThread shows a thread's messages. Updates that arrive while they
  // are fetched are kept, and the newer version of each message wins.
  async function openThread(id) {
    state.thread = id;
    state.unread.delete(id);
    state.messages = new Map();
    $('#messages').replaceChildren();
    state.messagesNext = '';
    const q = new URLSearchParams({ limit: String(screenful(60)) });
    const data = await api('GET', '/api/threads/' + encodeURIComponent(id) + '/messages?' + q);
    if (state.thread !== id) return; // another was opened meanwhile
    takeMessages(data);
    $('#thread-empty').hidden = true;
    $('#reply').hidden = false;
    renderThreads();
    renderChannels();
    scrollDown(true);
    $('#reply textarea').focus();
  }

  // takeMessages merges a page of the open thread (the newer version of
  // each message wins) and shows them all.
  function takeMessages(data) {
    for (const m of data.messages) {
      const live = state.messages.get(m.id);
      if (!live || live.seq < m.seq) state.messages.set(m.id, m);
    }
    state.messagesNext = data.next_cursor || '';
    const all = [...state.messages.values()].sort((a, b) => idNumber(a.id) - idNumber(b.id));
    const items = all.map(renderMessage);
    if (state.messagesNext) items.unshift(moreButton('Earlier messages…', earlierMessages));
    $('#messages').replaceChildren(...items);
  }

  // earlierMessages fetches the screen of messages before those shown.
  async function earlierMessages() {
    const id = state.thread;
    const box = $('#messages');
    const fromBottom = box.scrollHeight - box.scrollTop;
    const q = new URLSearchParams({ limit: String(screenful(60)), cursor: state.messagesNext });
    const data = await api('GET', '/api/threads/' + encodeURIComponent(id) + '/messages?' + q);
    if (state.thread !== id) return;
    takeMessages(data);
    box.scrollTop = box.scrollHeight - fromBottom; // keep the view where it was
  }

  function closeThread() {
    state.thread = '';
    state.messages = new Map();
    $('#messages').replaceChildren();
    $('#thread-empty').hidden = false;
    $('#reply').hidden = true;
  }

  // ---- messages ---------------------------------------------------------

  function placeMessage(m) {
    const box = $('#messages');
    const near = box.scrollHeight - box.scrollTop - box.clientHeight < 80;
    const old = box.querySelector('.msg[data-id="' + CSS.escape(m.id) + '"]');
    if (old && Number(old.dataset.seq) > m.seq) return; // stale
    const fresh = renderMessage(m);
    if (old) old.replaceWith(fresh);
    else box.appendChild(fresh);
    // Long command output opens at its tail: the newest lines are what a
    // person looks for (the bot already cut the oldest ones).
    if (m.bot) fresh.querySelectorAll('pre.md-code').forEach((pre) => { pre.scrollTop = pre.scrollHeight; });
    scrollDown(near);
  }

  function scrollDown(really) {
    const box = $('#messages');
    if (really) box.scrollTop = box.scrollHeight;
  }

  function renderMessage(m) {
    const art = document.createElement('article');
    art.className = 'msg' + (m.bot ? ' bot' : '') + (m.finished ? '' : ' streaming') + (m.user === state.user && !m.bot ? ' mine' : '');
    art.dataset.id = m.id;
    art.dataset.seq = String(m.seq);
    art.dataset.finished = m.finished ? 'true' : 'false';
    const head = document.createElement('header');
    const who = document.createElement('span');
    who.className = 'who';
    who.textContent = m.bot ? 'opsbot' : m.user;
    const when = document.createElement('time');
    when.textContent = clock(m.created);
    when.title = new Date(m.created).toLocaleString();
    head.append(who, when);
    if (!m.finished) {
      const w = document.createElement('span');
      w.className = 'writing';
      w.textContent = 'writing…';
      head.appendChild(w);
    }
    const body = document.createElement('div');
    body.className = 'msg-body';
    body.appendChild(md.render(m.text));
    art.append(head, body);
    if (m.fields && m.fields.length) art.appendChild(renderFields(m.fields));
    if (m.context) art.appendChild(md.inline(Object.assign(document.createElement('div'), { className: 'context' }), m.context));
    if (m.buttons && m.buttons.length) art.appendChild(renderButtons(m));
    drawSymbols(art);
    return art;
  }

  function renderFields(fields) {
    const dl = document.createElement('dl');
    dl.className = 'fields';
    for (const f of fields) {
      const div = document.createElement('div');
      const dt = document.createElement('dt');
      dt.textContent = f.title;
      const dd = document.createElement('dd');
      md.inline(dd, f.value);
      breakAfterSlashes(dd);
      div.append(dt, dd);
      dl.appendChild(div);
    }
    return dl;
  }

  // breakAfterSlashes lets a long path in el (a card's Directory) wrap
  // after a '/', not inside a name: a <wbr> after each slash, which copied
  // text does not keep. A name longer than the line still breaks (CSS).
  function breakAfterSlashes(el) {
    eachText(el, '.sym', /(?<=\/)(?=.)/s, (frag, part, i) => {
      if (i > 0) frag.append(document.createElement('wbr'));
      frag.append(part);
    });
  }

  // symbols are the status symbols the bot writes, by the word that names
  // each: drawn by the page (app.css), not left to an emoji font a machine
  // may lack (a box without one), and named in words for screen readers.
  const symbols = { '⏹': ['stop', 'stopped'], '🔔': ['bell', 'notice'] };

  // drawSymbols wraps each status symbol of el's text, outside code, in a
  // span the page draws; the character stays in the text for copying.
  function drawSymbols(el) {
    eachText(el, 'code, pre, .sym', /([⏹🔔]\uFE0F?)/u, (frag, part) => {
      const sym = symbols[part.replace('\uFE0F', '')];
      if (!sym) { frag.append(part); return; }
      const span = document.createElement('span');
      span.className = 'sym sym-' + sym[0];
      span.setAttribute('role', 'img');
      span.setAttribute('aria-label', sym[1]);
      span.title = sym[1];
      span.textContent = part;
      frag.append(span);
    });
  }

  // eachText splits each text node of el not inside skip (a selector) by
  // re, and replaces it with what add appends to a fragment for each piece
  // (i its index).
  function eachText(el, skip, re, add) {
    const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT,
      { acceptNode: n => n.parentElement.closest(skip) ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT });
    const texts = [];
    while (walker.nextNode()) texts.push(walker.currentNode);
    for (const t of texts) {
      const parts = t.data.split(re).filter(p => p !== '');
      if (parts.length < 2 && !re.test(t.data)) continue;
      const frag = document.createDocumentFragment();
      parts.forEach((p, i) => add(frag, p, i));
      t.replaceWith(frag);
    }
  }

  function renderButtons(m) {
    const div = document.createElement('div');
    div.className = 'actions';
    for (const b of m.buttons) {
      const btn = document.createElement('button');
      btn.type = 'button';
      btn.className = 'btn ' + (b.style || 'default');
      btn.textContent = b.label;
      btn.dataset.action = b.action_id;
      btn.addEventListener('click', () => click(m, b, btn));
      div.appendChild(btn);
    }
    return div;
  }

  async function click(m, b, btn) {
    const all = btn.parentElement.querySelectorAll('button');
    all.forEach(x => { x.disabled = true; });
    btn.classList.add('pending');
    const again = () => { all.forEach(x => { x.disabled = false; }); btn.classList.remove('pending'); };
    try {
      await api('POST', '/api/actions', { message_id: m.id, action_id: b.action_id, value: b.value, user: state.user, client: state.client });
      setTimeout(again, 15000); // the bot normally replaces the card before this
    } catch (err) {
      again();
      notice({ text: err.message, error: true });
    }
  }

  // ---- posting ---------------------------------------------------------

  async function send(form, thread) {
    const ta = form.querySelector('textarea');
    const text = ta.value;
    if (!text.trim()) return;
    const btn = form.querySelector('button');
    btn.disabled = true;
    try {
      const res = await api('POST', '/api/messages', { channel: state.channel, thread, user: state.user, text });
      ta.value = '';
      if (!thread) location.hash = '#/' + encodeURIComponent(res.channel) + '/' + encodeURIComponent(res.thread);
    } catch (err) {
      notice({ text: err.message, error: true });
    } finally {
      btn.disabled = false;
      ta.focus();
    }
  }

  function composer(form, thread) {
    form.addEventListener('submit', ev => { ev.preventDefault(); send(form, thread()); });
    form.querySelector('textarea').addEventListener('keydown', ev => {
      if (ev.key === 'Enter' && !ev.shiftKey && !ev.isComposing) {
        ev.preventDefault();
        send(form, thread());
      }
    });
  }

  // ---- notices ---------------------------------------------------------

  function notice(n) {
    const div = document.createElement('div');
    div.className = 'notice' + (n.error ? ' error' : '');
    const text = document.createElement('span');
    text.textContent = n.text;
    // No dismiss button: a notice lets clicks through (see app.css), and
    // goes by itself.
    div.append(text);
    $('#notices').appendChild(div);
    setTimeout(() => div.remove(), 10000);
    if (n.message_id) { // the bot answered the click: the buttons may be used again
      document.querySelectorAll('.msg[data-id="' + CSS.escape(n.message_id) + '"] .actions button').forEach(b => {
        b.disabled = false;
        b.classList.remove('pending');
      });
    }
  }

  // ---- routing and start ------------------------------------------------

  // clock shows a time as approval cards do ("Nov 24 11:12 UTC", Go's
  // "Jan 2 15:04 MST"): one format on the page.
  function clock(t) {
    const d = new Date(t);
    if (isNaN(d)) return '';
    const parts = {};
    for (const p of new Intl.DateTimeFormat('en-US', { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit',
      hourCycle: 'h23', timeZoneName: 'short' }).formatToParts(d)) parts[p.type] = p.value;
    return parts.month + ' ' + parts.day + ' ' + parts.hour + ':' + parts.minute + ' ' + parts.timeZoneName;
  }

  async function route() {
    const [ch, thread] = location.hash.replace(/^#\/?/, '').split('/').map(decodeURIComponent);
    const channel = ch || state.channels[0];
    try {
      if (channel !== state.channel) await openChannel(channel);
      if (thread && thread !== state.thread) await openThread(thread);
      if (!thread && state.thread) closeThread();
    } catch (err) {
      notice({ text: err.message, error: true });
    }
  }

  async function start() {
    const me = await api('GET', '/api/me');
    if (!me.self_named) { // the server knows the name: no choosing it here
      state.signedIn = true;
      state.user = me.user;
    }
    showUser();
    if (!state.user) { // nothing loads before the name: say so, not "connecting…"
      waiting('pick a name to start', 'The chat loads once you pick a name');
      $('#channel-list').innerHTML = '<li class="empty">Pick a name to see the channels.</li>';
      await askName();
      $('#channel-list').textContent = '';
    }
    waiting('connecting…', 'Loading the channels');
    if (!state.signedIn) $('#who').addEventListener('click', askName);
    composer($('#new-thread'), () => '');
    composer($('#reply'), () => state.thread);
    const data = await api('GET', '/api/channels');
    state.channels = data.channels.map(c => c.name);
    state.seq = data.seq;
    renderChannels();
    window.addEventListener('hashchange', route);
    await route();
    connect();
  }

  start().catch(err => notice({ text: 'Could not start: ' + err.message, error: true }));
})();
