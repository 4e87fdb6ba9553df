package main

import (
	"fmt"
	"strconv"
	"strings"
)

// parse reads the subset of TOML that gitleaks.toml is written in (it is
// itself generated): table headers, key = string / number / array of
// strings, and comments. Anything else is an error, so a format change
// in a newer gitleaks is noticed rather than misread.
func parse(src string) (config, error) {
	p := &parser{src: src}
	var cfg config
	var cur *allowlist // the allowlist being filled, if any
	var r *rule
	section := ""
	for {
		p.skipSpace(true)
		if p.eof() {
			break
		}
		if strings.HasPrefix(p.rest(), "[") {
			header, err := p.header()
			if err != nil {
				return cfg, err
			}
			section = header
			switch header {
			case "[allowlist]":
				cur = &cfg.Global
			case "[[rules]]":
				cfg.Rules = append(cfg.Rules, rule{})
				r, cur = &cfg.Rules[len(cfg.Rules)-1], nil
			case "[[rules.allowlists]]", "[rules.allowlist]":
				if r == nil {
					return cfg, p.errorf("%s before any rule", header)
				}
				r.Allow = append(r.Allow, allowlist{})
				cur = &r.Allow[len(r.Allow)-1]
			default:
				return cfg, p.errorf("unknown table %s", header)
			}
			continue
		}
		key, val, err := p.keyValue()
		if err != nil {
			return cfg, err
		}
		if err := set(section, r, cur, key, val); err != nil {
			return cfg, p.errorf("%w", err)
		}
	}
	return cfg, nil
}

// set stores one key's value where the current section says.
func set(section string, r *rule, a *allowlist, key string, val any) error {
	str, _ := val.(string)
	list, _ := val.([]string)
	switch {
	case section == "":
		return nil // title, minVersion
	case a != nil:
		switch key {
		case "description":
		case "regexTarget":
			a.Target = str
		case "regexes":
			a.Regexes = list
		case "stopwords":
			a.Stopwords = list
		case "paths", "commits":
			a.Paths = true
		case "condition":
			a.And = strings.EqualFold(str, "AND")
		default:
			return fmt.Errorf("unknown allowlist key %q", key)
		}
	case r != nil:
		switch key {
		case "id":
			r.ID = str
		case "description":
			r.Description = str
		case "regex":
			r.Regex = str
		case "path":
			r.Path = str
		case "keywords":
			r.Keywords = list
		case "entropy":
			f, ok := val.(float64)
			if !ok {
				return fmt.Errorf("entropy is not a number")
			}
			r.Entropy = f
		case "secretGroup":
			f, ok := val.(float64)
			if !ok {
				return fmt.Errorf("secretGroup is not a number")
			}
			r.SecretGroup = int(f)
		case "tags":
		default:
			return fmt.Errorf("unknown rule key %q", key)
		}
	}
	return nil
}

type parser struct {
	src string
	pos int
}

func (p *parser) eof() bool    { return p.pos >= len(p.src) }
func (p *parser) rest() string { return p.src[p.pos:] }

func (p *parser) errorf(format string, args ...any) error {
	line := strings.Count(p.src[:p.pos], "\n") + 1
	return fmt.Errorf("line %d: %w", line, fmt.Errorf(format, args...))
}

// skipSpace skips blanks and comments, and newlines when nl is set.
func (p *parser) skipSpace(nl bool) {
	for !p.eof() {
		switch c := p.src[p.pos]; {
		case c == ' ' || c == '\t' || c == '\r' || (nl && c == '\n'):
			p.pos++
		case c == '#':
			for !p.eof() && p.src[p.pos] != '\n' {
				p.pos++
			}
		default:
			return
		}
	}
}

func (p *parser) header() (string, error) {
	end := strings.IndexByte(p.rest(), '\n')
	if end < 0 {
		end = len(p.rest())
	}
	h := strings.TrimSpace(p.rest()[:end])
	p.pos += end
	return h, nil
}

func (p *parser) keyValue() (string, any, error) {
	start := p.pos
	for !p.eof() && strings.IndexByte(" \t=", p.src[p.pos]) < 0 {
		p.pos++
	}
	key := p.src[start:p.pos]
	p.skipSpace(false)
	if p.eof() || p.src[p.pos] != '=' {
		return "", nil, p.errorf("expected = after %q", key)
	}
	p.pos++
	p.skipSpace(false)
	v, err := p.value()
	return key, v, err
}

func (p *parser) value() (any, error) {
	if p.eof() {
		return nil, p.errorf("missing value")
	}
	switch c := p.src[p.pos]; {
	case c == '[':
		p.pos++
		var list []string
		for {
			p.skipSpace(true)
			if p.eof() {
				return nil, p.errorf("unterminated array")
			}
			if p.src[p.pos] == ']' {
				p.pos++
				return list, nil
			}
			s, err := p.str()
			if err != nil {
				return nil, err
			}
			list = append(list, s)
			p.skipSpace(true)
			if !p.eof() && p.src[p.pos] == ',' {
				p.pos++
			}
		}
	case c == '\'' || c == '"':
		return p.str()
	default:
		end := strings.IndexAny(p.rest(), " \t\r\n#")
		if end < 0 {
			end = len(p.rest())
		}
		f, err := strconv.ParseFloat(p.rest()[:end], 64)
		if err != nil {
			return nil, p.errorf("unsupported value %q", p.rest()[:end])
		}
		p.pos += end
		return f, nil
	}
}

// str reads a literal ('...', ”'...”') or basic ("...") string.
func (p *parser) str() (string, error) {
	r := p.rest()
	switch {
	case strings.HasPrefix(r, "'''"):
		end := strings.Index(r[3:], "'''")
		if end < 0 {
			return "", p.errorf("unterminated '''")
		}
		p.pos += 3 + end + 3
		return strings.TrimPrefix(r[3:3+end], "\n"), nil
	case strings.HasPrefix(r, "'"):
		end := strings.IndexByte(r[1:], '\'')
		if end < 0 {
			return "", p.errorf("unterminated '")
		}
		p.pos += 1 + end + 1
		return r[1 : 1+end], nil
	case strings.HasPrefix(r, `"`):
		for i := 1; i < len(r); i++ {
			switch r[i] {
			case '\\':
				i++
			case '"':
				s, err := strconv.Unquote(r[:i+1])
				if err != nil {
					return "", p.errorf("bad string %s: %w", r[:i+1], err)
				}
				p.pos += i + 1
				return s, nil
			}
		}
		return "", p.errorf("unterminated \"")
	}
	return "", p.errorf("expected a string")
}
