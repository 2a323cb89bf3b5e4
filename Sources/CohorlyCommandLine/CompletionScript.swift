/// A bash completion script written from the commands' declarations (``CommandSpec``): command words, then for a
/// declared command its option names, a choice option's values, files or directories where an option or the
/// positionals take them. A command without a declaration completes its words only.
package enum CompletionScript {
    /// The script for `program`, whose commands are `commands` (their words, and their declaration when they
    /// have one). Load it with `source <(cohorly completion bash)`.
    package static func bash(program: String, commands: [(words: [String], spec: CommandSpec?)]) -> String {
        let function = "_" + program.map { $0.isLetter || $0.isNumber ? $0 : "_" }.reduce(into: "") { $0.append($1) }
        var firstWords: [String] = []
        for command in commands where !firstWords.contains(command.words[0]) { firstWords.append(command.words[0]) }
        var script = """
            # bash completion for \(program), written by `\(program) completion bash` from its commands' option tables.
            # Load it with: source <(\(program) completion bash)
            \(function)() {
                local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
                if (( COMP_CWORD == 1 )); then
                    COMPREPLY=($(compgen -W \(quoted(firstWords + ["help", "--help", "--version"])) -- "$cur"))
                    return
                fi
                local command=${COMP_WORDS[1]}
                case $command in

            """
        // Groups (`debug-files check|find|upload`): the second word completes among the group's.
        for first in firstWords {
            let group = commands.filter { $0.words[0] == first && $0.words.count > 1 }
            guard !group.isEmpty else { continue }
            script += """
                        \(quoted([first])))
                            if (( COMP_CWORD == 2 )); then
                                COMPREPLY=($(compgen -W \(quoted(group.map { $0.words[1] })) -- "$cur"))
                                return
                            fi
                            command="$command ${COMP_WORDS[2]}" ;;

                """
        }
        script += """
                esac
                case $command in

            """
        for command in commands {
            guard let spec = command.spec else { continue }
            script += "        " + quoted([spec.name]) + ")\n"
            script += "            case $prev in\n"
            for option in spec.options {
                switch option.value {
                case .none: continue
                case .choice(_, let values):
                    script +=
                        "                \(option.name)) COMPREPLY=($(compgen -W \(quoted(values)) -- \"$cur\")); return ;;\n"
                case .file:
                    script += "                \(option.name)) COMPREPLY=($(compgen -f -- \"$cur\")); return ;;\n"
                case .directory:
                    script += "                \(option.name)) COMPREPLY=($(compgen -d -- \"$cur\")); return ;;\n"
                case .word: script += "                \(option.name)) return ;;\n"
                }
            }
            script += "            esac\n"
            let names = quoted(spec.options.map(\.name) + ["--help"])
            let positionals = spec.positionals.areFiles ? "COMPREPLY=($(compgen -f -- \"$cur\"))" : "return"
            script += """
                            if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W \(names) -- "$cur")); else \(positionals); fi
                            ;;

                """
        }
        script += """
                esac
            }
            complete -F \(function) \(program)

            """
        return script
    }

    /// `words` as one single-quoted shell word, separated by spaces.
    static func quoted(_ words: [String]) -> String {
        "'"
            + words.joined(separator: " ").split(separator: "'", omittingEmptySubsequences: false).joined(
                separator: "'\\''") + "'"
    }
}
