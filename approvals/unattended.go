package approvals

import "strconv"

// UnattendedEnv is the environment every command the policy allows without
// a person runs with, on every host: it shuts the ways "read-only" tools
// run code named in files the command does not name, which the classifier
// cannot see from the command line:
//   - git reads commands from the repository's config (core.fsmonitor,
//     core.pager, diff.external, textconv, uploadpack…); GIT_CONFIG_COUNT
//     entries override the repository's values for this run;
//   - python imports modules from the working directory (python3 -m
//     json.tool imports ./json.py); PYTHONSAFEPATH keeps it off sys.path.
func UnattendedEnv() []string {
	env := []string{"PYTHONSAFEPATH=1", "PYTHONNOUSERSITE=1", "GIT_PAGER=cat", "PAGER=cat"}
	overrides := [][2]string{
		{"core.fsmonitor", "false"},
		{"core.pager", "cat"},
		{"core.sshCommand", "ssh"},
		{"core.hooksPath", "/dev/null"},
		{"diff.external", ""},
		{"credential.helper", ""},
	}
	env = append(env, "GIT_CONFIG_COUNT="+strconv.Itoa(len(overrides)))
	for i, kv := range overrides {
		env = append(env, "GIT_CONFIG_KEY_"+strconv.Itoa(i)+"="+kv[0], "GIT_CONFIG_VALUE_"+strconv.Itoa(i)+"="+kv[1])
	}
	return env
}
