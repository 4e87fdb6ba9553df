package redact

// matcher finds many keywords in one pass over a line, ASCII
// case-insensitively (an Aho-Corasick automaton turned into a table):
// the prefilter that keeps about 220 regexes off lines that cannot match.
type matcher struct {
	class  [256]uint8 // byte → column; 0 for bytes in no keyword
	ncols  int
	next   []int32 // state*ncols + column → state
	output [][]int32
	lens   []int // keyword lengths
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// newMatcher builds the automaton for lower-case words.
func newMatcher(words []string) *matcher {
	m := &matcher{ncols: 1}
	for _, w := range words {
		m.lens = append(m.lens, len(w))
		for i := 0; i < len(w); i++ {
			c := lower(w[i])
			if m.class[c] == 0 {
				m.class[c] = uint8(m.ncols)
				m.ncols++
			}
		}
	}
	for c := 'A'; c <= 'Z'; c++ {
		m.class[c] = m.class[c+'a'-'A']
	}
	// The trie; -1 is "no edge yet".
	trie := [][]int32{m.newRow()}
	m.output = [][]int32{nil}
	for wi, w := range words {
		s := int32(0)
		for i := 0; i < len(w); i++ {
			col := m.class[w[i]]
			if trie[s][col] < 0 {
				trie[s][col] = int32(len(trie))
				trie = append(trie, m.newRow())
				m.output = append(m.output, nil)
			}
			s = trie[s][col]
		}
		m.output[s] = append(m.output[s], int32(wi))
	}
	m.link(trie)
	return m
}

func (m *matcher) newRow() []int32 {
	row := make([]int32, m.ncols)
	for i := range row {
		row[i] = -1
	}
	return row
}

// link fills the missing edges through failure links, breadth first, so
// that scanning is one table look-up per byte.
func (m *matcher) link(trie [][]int32) {
	fail := make([]int32, len(trie))
	m.next = make([]int32, len(trie)*m.ncols)
	queue := []int32{}
	for col := 0; col < m.ncols; col++ {
		if t := trie[0][col]; t >= 0 {
			m.next[col] = t
			queue = append(queue, t)
		}
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		m.output[s] = append(m.output[s], m.output[fail[s]]...)
		for col := 0; col < m.ncols; col++ {
			t := trie[s][col]
			if t < 0 {
				m.next[int(s)*m.ncols+col] = m.next[int(fail[s])*m.ncols+col]
				continue
			}
			m.next[int(s)*m.ncols+col] = t
			fail[t] = m.next[int(fail[s])*m.ncols+col]
			queue = append(queue, t)
		}
	}
}

// each calls fn with the index of every keyword occurrence in s and the
// offset just past it.
func (m *matcher) each(s string, fn func(word int32, end int)) {
	state := int32(0)
	for i := 0; i < len(s); i++ {
		state = m.next[int(state)*m.ncols+int(m.class[s[i]])]
		for _, w := range m.output[state] {
			fn(w, i+1)
		}
	}
}
