package checks

import (
	"fmt"
	"strings"
	"time"
	_ "time/tzdata" // zones work in minimal images without /usr/share/zoneinfo

	"github.com/robfig/cron/v3"
)

// parser reads 5 fields, descriptors (@daily, @every 15m) and a leading
// CRON_TZ=Zone (or TZ=Zone).
var parser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// minEvery is the shortest @every: a fleet-wide check more often than
// once a minute is a mistake.
const minEvery = time.Minute

// ParseCron reads a schedule's cron. Its errors say what to write instead.
func ParseCron(spec string) (cron.Schedule, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return nil, fmt.Errorf(`is required: 5 fields ("0 9 * * 1-5"), @daily or "@every 15m"`)
	}
	if _, _, err := splitZone(spec); err != nil {
		return nil, err
	}
	if every, ok := strings.CutPrefix(rest(spec), "@every "); ok {
		if d, err := time.ParseDuration(strings.TrimSpace(every)); err == nil && d < minEvery {
			return nil, fmt.Errorf("%q runs more than once a minute: use @every 1m or longer", spec)
		}
	}
	return parse(spec)
}

// parse calls the cron parser, turning a panic on odd input into an error.
func parse(spec string) (s cron.Schedule, err error) {
	defer func() {
		if recover() != nil {
			s, err = nil, fmt.Errorf("%q is not a cron schedule: use 5 fields, e.g. \"0 9 * * 1-5\", @daily or \"@every 15m\"", spec)
		}
	}()
	s, err = parser.Parse(spec)
	if err != nil {
		return nil, fmt.Errorf("%q is not a cron schedule (%v): use 5 fields, e.g. \"0 9 * * 1-5\", @daily or \"@every 15m\"", spec, err)
	}
	return s, nil
}

// splitZone reads a leading CRON_TZ=Zone or TZ=Zone. Without one, the zone
// is the bot's local time. cron.Parse panics on a zone with no schedule
// after it, so that is refused here.
func splitZone(spec string) (*time.Location, string, error) {
	var name string
	var ok bool
	if name, ok = strings.CutPrefix(spec, "CRON_TZ="); !ok {
		if name, ok = strings.CutPrefix(spec, "TZ="); !ok {
			return time.Local, spec, nil
		}
	}
	name, sched, found := strings.Cut(name, " ")
	if !found || strings.TrimSpace(sched) == "" {
		return nil, "", fmt.Errorf("%q names a time zone but no schedule: add one after it, e.g. \"CRON_TZ=%s 0 9 * * 1-5\"", spec, name)
	}
	loc, err := time.LoadLocation(name)
	if err != nil || name == "" {
		return nil, "", fmt.Errorf("%q is not a time zone: use an IANA name such as Europe/Berlin or UTC", name)
	}
	return loc, strings.TrimSpace(sched), nil
}

// rest is the spec without its zone.
func rest(spec string) string {
	_, r, err := splitZone(spec)
	if err != nil {
		return spec
	}
	return r
}

// zoneOf is the zone a valid spec runs in: its CRON_TZ, else local time.
func zoneOf(spec string) *time.Location {
	loc, _, err := splitZone(strings.TrimSpace(spec))
	if err != nil {
		return time.Local
	}
	return loc
}
