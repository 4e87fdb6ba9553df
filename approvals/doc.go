// Package approvals decides whether a command may run: a policy classifies
// every simple command of its shell syntax tree, and a Gate collects votes on
// commands that need a human to approve them. The Guard puts both in front
// of a hosts.Executor: the agent's tools, the chat's `run`, and `opsbot
// hosts exec` ask it before anything runs.
//
// The classifier reads a command as the programs that will run it read it:
//   - the command line in the dialect of the shell that runs it
//     (ShellDialect, bash, which hosts.RunnerShell runs everywhere), and a
//     string handed to another shell in that shell's dialect (sh both as
//     dash and as bash); TestCorpusParsesAsTheRunnerShell compares every
//     corpus line with real bash's own parse;
//   - each allowed program's options with its parser's family (optFamily:
//     GNU getopt_long, pflag, OpenSSL, iproute2, whole words), from a spec
//     listing every option it accepts; an option not in the spec needs
//     approval (specs.go, checked against installed tools' --help);
//   - sed scripts with GNU sed's own grammar (sed_parse.go follows its
//     compile.c), checked against GNU sed's --debug parse; awk programs
//     with a lexer and a small grammar, checked against mawk's byte code;
//     jq filters for the names that read the environment or files.
package approvals
