/**
 * The scripts `fitq completion SHELL` prints: each asks `fitq
 * complete-words` for the candidates of the word being completed
 * (completion.ts), so commands, flags, run ids, worker names and
 * namespaces complete as fitq itself knows them.
 */
export const COMPLETION_SHELLS = ['bash', 'zsh', 'fish'] as const;
export type CompletionShell = (typeof COMPLETION_SHELLS)[number];

const BASH = `# fitq completion for bash: eval "$(fitq completion bash)" in ~/.bashrc
_fitq_complete() {
  local IFS=$'\\n'
  COMPREPLY=($(fitq complete-words -- "\${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null))
}
complete -o default -F _fitq_complete fitq
`;

const ZSH = `# fitq completion for zsh: eval "$(fitq completion zsh)" in ~/.zshrc (after compinit)
_fitq_complete() {
  local -a candidates
  candidates=("\${(@f)$(fitq complete-words -- "\${(@)words[2,CURRENT]}" 2>/dev/null)}")
  compadd -a candidates
}
compdef _fitq_complete fitq
`;

const FISH = `# fitq completion for fish: fitq completion fish > ~/.config/fish/completions/fitq.fish
complete -c fitq -f -a '(fitq complete-words -- (commandline -opc)[2..-1] (commandline -ct) 2>/dev/null)'
`;

export const completionScript = (shell: CompletionShell): string => ({ bash: BASH, zsh: ZSH, fish: FISH })[shell];
