/**
 * The run keeper: a small helper between the worker and a run's command that
 * makes sure nothing of the run outlives it, not even what escaped its
 * process group and session with `setsid` (a daemon).
 *
 * On Linux a process can become a "child subreaper"
 * (`prctl(PR_SET_CHILD_SUBREAPER)`): processes orphaned below it are
 * reparented to it rather than to init. Node cannot call prctl without a
 * native addon, so the keeper is a short Perl script (Perl's `syscall`
 * makes the call). It
 *
 * 1. becomes a subreaper, forks the run's main process into a process group
 *    of its own, tells the worker that group over fd 3, and closes its
 *    stdout and stderr (so only the run holds the output pipes);
 * 2. the main process waits at the gate (a line on fd 3) and then execs the
 *    command, as the plain `sh` gate does;
 * 3. when the main process has exited, the keeper SIGKILLs its group, then
 *    every process left below the keeper (escaped ones included: they are
 *    its children now), until none is left, and reports the main process's
 *    wait status on fd 3 (`status N`) before it exits.
 *
 * The keeper itself is in a group and session of its own, so signals to the
 * run's group (cancel, stop, the watchdog's) never reach it: however the
 * main process ends, the keeper cleans up after it. Without Linux or Perl
 * (or when prctl is refused) the worker runs commands with the plain gate,
 * and a run's escaped processes may outlive it.
 */
import { spawnSync } from 'node:child_process';

/** prctl's system call number, per Node architecture, on Linux. */
const PRCTL_SYSCALL: Partial<Record<NodeJS.Architecture, number>> = {
  x64: 157,
  arm64: 167,
  riscv64: 167,
  loong64: 167,
  ia32: 172,
  arm: 172,
  s390x: 172,
  ppc64: 171,
};

const PR_SET_CHILD_SUBREAPER = 36;

/**
 * ARGV: prctl's syscall number, then the command. The run's PERL5OPT
 * travels as FITQ_RUN_PERL5OPT (it must not change this script) and is put
 * back for the command.
 */
export const KEEPER_SCRIPT = `
use strict;
my $nr = shift @ARGV;
my @signals = qw(HUP INT TERM PIPE QUIT USR1 USR2);
my %inherited = map { $_ => ($SIG{$_} // 'DEFAULT') } @signals;
$SIG{$_} = 'IGNORE' for @signals;
syscall($nr, ${PR_SET_CHILD_SUBREAPER}, 1, 0, 0, 0) == 0 or do { print STDERR "fitq: cannot become a subreaper: $!\\n"; exit 125 };
open(my $gate, '+<&=', 3) or exit 125;
my $main = fork();
defined $main or do { print STDERR "fitq: fork failed: $!\\n"; exit 125 };
if ($main == 0) {
  setpgrp(0, 0);
  $SIG{$_} = $inherited{$_} for @signals;
  my $go = '';
  while ($go !~ /\\n/) { sysread($gate, $go, 1, length $go) or exit 125 }
  close $gate;
  if (exists $ENV{FITQ_RUN_PERL5OPT}) { $ENV{PERL5OPT} = delete $ENV{FITQ_RUN_PERL5OPT} }
  exec { $ARGV[0] } @ARGV;
  print STDERR "fitq-run: cannot run $ARGV[0]: $!\\n";
  exit 127;
}
setpgrp($main, $main);
syswrite($gate, "group $main\\n");
open(STDOUT, '>', '/dev/null');
open(STDERR, '>', '/dev/null');
my $status;
for (;;) {
  my $pid = waitpid(-1, 0);
  if ($pid == $main) { $status = $?; last }
  if ($pid == -1) { $status = 127 << 8; last }
}
kill 'KILL', -$main;
sub children {
  my @found;
  opendir(my $proc, '/proc') or return ();
  for my $pid (grep { /^\\d+$/ } readdir $proc) {
    open(my $stat, '<', "/proc/$pid/stat") or next;
    my $line = <$stat>;
    push @found, $pid if defined $line && $line =~ /\\)\\s+\\S+\\s+(\\d+)/ && $1 == $$;
  }
  return @found;
}
my $idle = 0;
for (;;) {
  my @left = children();
  kill 'KILL', @left if @left;
  my $pid = waitpid(-1, @left ? 0 : 1);
  last if $pid == -1;
  if ($pid == 0) { last if ++$idle > 200; select(undef, undef, undef, 0.005) } else { $idle = 0 }
}
syswrite($gate, "status $status\\n");
exit 0;
`;

/** The run's environment for the keeper: the run's PERL5OPT must not change the keeper's script (it gets it back). */
export function keeperEnv(env: Record<string, string>): Record<string, string> {
  if (env.PERL5OPT === undefined) return env;
  const { PERL5OPT, ...rest } = env;
  return { ...rest, FITQ_RUN_PERL5OPT: PERL5OPT };
}

export type KeeperSupport = { ok: true; prctl: number } | { ok: false; why: string };

let support: KeeperSupport | undefined;

/** Whether runs can be started under the keeper here; checked once per process (it starts Perl once). */
export function keeperSupport(): KeeperSupport {
  support ??= probe();
  return support;
}

function probe(): KeeperSupport {
  if (process.platform !== 'linux') return { ok: false, why: 'it needs Linux (a child subreaper)' };
  const prctl = PRCTL_SYSCALL[process.arch];
  if (prctl === undefined) return { ok: false, why: `fitq does not know prctl's system call number on ${process.arch}` };
  const check = spawnSync('perl', ['-e', `syscall(${prctl}, ${PR_SET_CHILD_SUBREAPER}, 1, 0, 0, 0) == 0 or exit 3`], {
    stdio: 'ignore',
    timeout: 10_000,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
  });
  if (check.error) return { ok: false, why: `perl could not be started (${(check.error as NodeJS.ErrnoException).code ?? check.error.message})` };
  if (check.status !== 0) return { ok: false, why: 'prctl(PR_SET_CHILD_SUBREAPER) was refused' };
  return { ok: true, prctl };
}
