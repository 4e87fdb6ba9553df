// Package policy classifies a command: it reads every simple command of its
// shell syntax tree and decides allow, approve or deny (a Decision, with
// reasons people read), for a Target host. It runs nothing and asks no one:
// package approvals acts on its Decision (the Guard, the Gate's votes), and
// checks and the terminal classify with it directly.
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
//
// Besides the verdict it says what an allowed command may touch: the ports
// it may connect to (Decision.ConnectPorts), the secret paths its sandbox
// hides (Policy.SecretPaths), and the environment of unattended commands
// (UnattendedEnv). RenderCommand makes a command safe to show to the
// people asked to approve it.
package policy
