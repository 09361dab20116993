# bash completion for tidesim (installed by `make install` into
# $(PREFIX)/share/bash-completion/completions/tidesim). Options are those of
# each command's --help (tests/cli/test_cli_conventions.c checks that they agree).

_tidesim() {
    local cur prev cmd
    COMPREPLY=()
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD - 1]}
    cmd=${COMP_WORDS[1]}
    local commands="run validate sweep plan report compare check plot mig traces help"
    if [ "$COMP_CWORD" -eq 1 ]; then
        COMPREPLY=($(compgen -W "$commands --help --version" -- "$cur"))
        return
    fi
    local opts files=""
    case $cmd in
    run)
        opts="--output --seed --replications --precision --max-replications --quiet --set --help"
        files=yaml ;;
    validate)
        opts="--set --format --help"
        files=yaml ;;
    sweep)
        opts="--output --jobs --force --report --format --quiet --help"
        files=yaml ;;
    plan)
        opts="--output --jobs --objective --force --report --quiet --help"
        files=yaml ;;
    report)
        opts="--format --output --help"
        files=h5 ;;
    compare)
        opts="--format --point --where --pool --help"
        files=h5 ;;
    check)
        opts="--min-util --min-slo --max-ckpt-overhead --max-p99-ms --max-ttft-p99 --max-tpot-p99 --util-kind --against
              --tolerance --max-queue-delay --backlog-drained-by --min-training-gpu-h-per-day
              --min --max --confident --point --where --pool --queue --format --help"
        files=h5 ;;
    plot)
        opts="--output --format --help"
        files=h5 ;;
    mig)
        opts="--help"
        if [ "$COMP_CWORD" -eq 2 ]; then
            COMPREPLY=($(compgen -W "profiles validate --help" -- "$cur"))
        elif [ "$COMP_CWORD" -eq 3 ]; then
            COMPREPLY=($(compgen -W "a100-sxm4-80gb a100-sxm4-40gb" -- "$cur"))
        fi
        return ;;
    traces)
        if [ "$COMP_CWORD" -eq 2 ]; then
            COMPREPLY=($(compgen -W "inspect convert --help" -- "$cur"))
            return
        fi
        opts="--format --output --on-bad-row --end --loop --loop-period --max-records --seed
              --time-column --time-unit --count-column --interval --in-column --out-column
              --cut --rest --checkpoint-interval --help"
        files=csv ;;
    *)
        return ;;
    esac
    case $prev in
    --format | -f)
        case $cmd in
        report) COMPREPLY=($(compgen -W "text markdown json html" -- "$cur")) ;;
        compare) COMPREPLY=($(compgen -W "text markdown json" -- "$cur")) ;;
        check) COMPREPLY=($(compgen -W "text json junit" -- "$cur")) ;;
        validate | sweep) COMPREPLY=($(compgen -W "text json" -- "$cur")) ;;
        plot) COMPREPLY=($(compgen -W "png svg" -- "$cur")) ;;
        traces) COMPREPLY=($(compgen -W "azure servegen csv counts openb pai helios text json" -- "$cur")) ;;
        esac
        return ;;
    --util-kind)
        COMPREPLY=($(compgen -W "busy allocated useful" -- "$cur"))
        return ;;
    --objective)
        COMPREPLY=($(compgen -W "cost gpus" -- "$cur"))
        return ;;
    --on-bad-row)
        COMPREPLY=($(compgen -W "fail skip" -- "$cur"))
        return ;;
    --time-unit)
        COMPREPLY=($(compgen -W "s ms us wall" -- "$cur"))
        return ;;
    --set)
        COMPREPLY=($(compgen -W "name= seed= duration= sample_interval= timezone= cluster.
                     services. training. policy. output." -- "$cur"))
        compopt -o nospace 2>/dev/null
        return ;;
    --output | -o | --against | --rest)
        COMPREPLY=($(compgen -f -- "$cur"))
        return ;;
    --report)
        COMPREPLY=($(compgen -d -- "$cur"))
        return ;;
    --seed | --replications | -r | --precision | --max-replications | --jobs | -j | --end | \
        --loop-period | --cut | --checkpoint-interval | \
        --max-records | --interval | \
        --min-util | --min-slo | --max-ckpt-overhead | --max-p99-ms | --max-ttft-p99 | \
        --max-tpot-p99 | --tolerance | \
        --max-queue-delay | --backlog-drained-by | --min-training-gpu-h-per-day | --min | --max | \
        --queue | \
        --point | --where | \
        --time-column | --count-column | --in-column | --out-column)
        return ;;
    esac
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$opts" -- "$cur"))
    else
        COMPREPLY=($(compgen -f -X "!*.$files" -- "$cur") $(compgen -d -- "$cur"))
    fi
}
complete -F _tidesim tidesim
