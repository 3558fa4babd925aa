_bauxite() {
    local i cur prev opts cmd
    COMPREPLY=()
    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
        cur="$2"
    else
        cur="${COMP_WORDS[COMP_CWORD]}"
    fi
    prev="$3"
    cmd=""
    opts=""

    for i in "${COMP_WORDS[@]:0:COMP_CWORD}"
    do
        case "${cmd},${i}" in
            ",$1")
                cmd="bauxite"
                ;;
            bauxite,audit)
                cmd="bauxite__subcmd__audit"
                ;;
            bauxite,bridge)
                cmd="bauxite__subcmd__bridge"
                ;;
            bauxite,demo)
                cmd="bauxite__subcmd__demo"
                ;;
            bauxite,down)
                cmd="bauxite__subcmd__down"
                ;;
            bauxite,eval)
                cmd="bauxite__subcmd__eval"
                ;;
            bauxite,help)
                cmd="bauxite__subcmd__help"
                ;;
            bauxite,link)
                cmd="bauxite__subcmd__link"
                ;;
            bauxite,link-reap)
                cmd="bauxite__subcmd__link__subcmd__reap"
                ;;
            bauxite,probe-responder)
                cmd="bauxite__subcmd__probe__subcmd__responder"
                ;;
            bauxite,profile)
                cmd="bauxite__subcmd__profile"
                ;;
            bauxite,reference)
                cmd="bauxite__subcmd__reference"
                ;;
            bauxite,reflect)
                cmd="bauxite__subcmd__reflect"
                ;;
            bauxite,sim)
                cmd="bauxite__subcmd__sim"
                ;;
            bauxite,status)
                cmd="bauxite__subcmd__status"
                ;;
            bauxite,up)
                cmd="bauxite__subcmd__up"
                ;;
            bauxite__subcmd__bridge,bench)
                cmd="bauxite__subcmd__bridge__subcmd__bench"
                ;;
            bauxite__subcmd__bridge,help)
                cmd="bauxite__subcmd__bridge__subcmd__help"
                ;;
            bauxite__subcmd__bridge,schema)
                cmd="bauxite__subcmd__bridge__subcmd__schema"
                ;;
            bauxite__subcmd__bridge__subcmd__help,bench)
                cmd="bauxite__subcmd__bridge__subcmd__help__subcmd__bench"
                ;;
            bauxite__subcmd__bridge__subcmd__help,help)
                cmd="bauxite__subcmd__bridge__subcmd__help__subcmd__help"
                ;;
            bauxite__subcmd__bridge__subcmd__help,schema)
                cmd="bauxite__subcmd__bridge__subcmd__help__subcmd__schema"
                ;;
            bauxite__subcmd__eval,bridge)
                cmd="bauxite__subcmd__eval__subcmd__bridge"
                ;;
            bauxite__subcmd__eval,help)
                cmd="bauxite__subcmd__eval__subcmd__help"
                ;;
            bauxite__subcmd__eval,peer)
                cmd="bauxite__subcmd__eval__subcmd__peer"
                ;;
            bauxite__subcmd__eval__subcmd__help,bridge)
                cmd="bauxite__subcmd__eval__subcmd__help__subcmd__bridge"
                ;;
            bauxite__subcmd__eval__subcmd__help,help)
                cmd="bauxite__subcmd__eval__subcmd__help__subcmd__help"
                ;;
            bauxite__subcmd__eval__subcmd__help,peer)
                cmd="bauxite__subcmd__eval__subcmd__help__subcmd__peer"
                ;;
            bauxite__subcmd__eval__subcmd__help__subcmd__peer,pub)
                cmd="bauxite__subcmd__eval__subcmd__help__subcmd__peer__subcmd__pub"
                ;;
            bauxite__subcmd__eval__subcmd__help__subcmd__peer,sub)
                cmd="bauxite__subcmd__eval__subcmd__help__subcmd__peer__subcmd__sub"
                ;;
            bauxite__subcmd__eval__subcmd__peer,help)
                cmd="bauxite__subcmd__eval__subcmd__peer__subcmd__help"
                ;;
            bauxite__subcmd__eval__subcmd__peer,pub)
                cmd="bauxite__subcmd__eval__subcmd__peer__subcmd__pub"
                ;;
            bauxite__subcmd__eval__subcmd__peer,sub)
                cmd="bauxite__subcmd__eval__subcmd__peer__subcmd__sub"
                ;;
            bauxite__subcmd__eval__subcmd__peer__subcmd__help,help)
                cmd="bauxite__subcmd__eval__subcmd__peer__subcmd__help__subcmd__help"
                ;;
            bauxite__subcmd__eval__subcmd__peer__subcmd__help,pub)
                cmd="bauxite__subcmd__eval__subcmd__peer__subcmd__help__subcmd__pub"
                ;;
            bauxite__subcmd__eval__subcmd__peer__subcmd__help,sub)
                cmd="bauxite__subcmd__eval__subcmd__peer__subcmd__help__subcmd__sub"
                ;;
            bauxite__subcmd__help,audit)
                cmd="bauxite__subcmd__help__subcmd__audit"
                ;;
            bauxite__subcmd__help,bridge)
                cmd="bauxite__subcmd__help__subcmd__bridge"
                ;;
            bauxite__subcmd__help,demo)
                cmd="bauxite__subcmd__help__subcmd__demo"
                ;;
            bauxite__subcmd__help,down)
                cmd="bauxite__subcmd__help__subcmd__down"
                ;;
            bauxite__subcmd__help,eval)
                cmd="bauxite__subcmd__help__subcmd__eval"
                ;;
            bauxite__subcmd__help,help)
                cmd="bauxite__subcmd__help__subcmd__help"
                ;;
            bauxite__subcmd__help,link)
                cmd="bauxite__subcmd__help__subcmd__link"
                ;;
            bauxite__subcmd__help,link-reap)
                cmd="bauxite__subcmd__help__subcmd__link__subcmd__reap"
                ;;
            bauxite__subcmd__help,probe-responder)
                cmd="bauxite__subcmd__help__subcmd__probe__subcmd__responder"
                ;;
            bauxite__subcmd__help,profile)
                cmd="bauxite__subcmd__help__subcmd__profile"
                ;;
            bauxite__subcmd__help,reference)
                cmd="bauxite__subcmd__help__subcmd__reference"
                ;;
            bauxite__subcmd__help,reflect)
                cmd="bauxite__subcmd__help__subcmd__reflect"
                ;;
            bauxite__subcmd__help,sim)
                cmd="bauxite__subcmd__help__subcmd__sim"
                ;;
            bauxite__subcmd__help,status)
                cmd="bauxite__subcmd__help__subcmd__status"
                ;;
            bauxite__subcmd__help,up)
                cmd="bauxite__subcmd__help__subcmd__up"
                ;;
            bauxite__subcmd__help__subcmd__bridge,bench)
                cmd="bauxite__subcmd__help__subcmd__bridge__subcmd__bench"
                ;;
            bauxite__subcmd__help__subcmd__bridge,schema)
                cmd="bauxite__subcmd__help__subcmd__bridge__subcmd__schema"
                ;;
            bauxite__subcmd__help__subcmd__eval,bridge)
                cmd="bauxite__subcmd__help__subcmd__eval__subcmd__bridge"
                ;;
            bauxite__subcmd__help__subcmd__eval,peer)
                cmd="bauxite__subcmd__help__subcmd__eval__subcmd__peer"
                ;;
            bauxite__subcmd__help__subcmd__eval__subcmd__peer,pub)
                cmd="bauxite__subcmd__help__subcmd__eval__subcmd__peer__subcmd__pub"
                ;;
            bauxite__subcmd__help__subcmd__eval__subcmd__peer,sub)
                cmd="bauxite__subcmd__help__subcmd__eval__subcmd__peer__subcmd__sub"
                ;;
            bauxite__subcmd__help__subcmd__link,trace-stats)
                cmd="bauxite__subcmd__help__subcmd__link__subcmd__trace__subcmd__stats"
                ;;
            bauxite__subcmd__help__subcmd__profile,check)
                cmd="bauxite__subcmd__help__subcmd__profile__subcmd__check"
                ;;
            bauxite__subcmd__help__subcmd__profile,schema)
                cmd="bauxite__subcmd__help__subcmd__profile__subcmd__schema"
                ;;
            bauxite__subcmd__help__subcmd__sim,agree)
                cmd="bauxite__subcmd__help__subcmd__sim__subcmd__agree"
                ;;
            bauxite__subcmd__help__subcmd__sim,merge)
                cmd="bauxite__subcmd__help__subcmd__sim__subcmd__merge"
                ;;
            bauxite__subcmd__help__subcmd__sim,robot)
                cmd="bauxite__subcmd__help__subcmd__sim__subcmd__robot"
                ;;
            bauxite__subcmd__help__subcmd__sim,run)
                cmd="bauxite__subcmd__help__subcmd__sim__subcmd__run"
                ;;
            bauxite__subcmd__help__subcmd__sim,study)
                cmd="bauxite__subcmd__help__subcmd__sim__subcmd__study"
                ;;
            bauxite__subcmd__link,help)
                cmd="bauxite__subcmd__link__subcmd__help"
                ;;
            bauxite__subcmd__link,trace-stats)
                cmd="bauxite__subcmd__link__subcmd__trace__subcmd__stats"
                ;;
            bauxite__subcmd__link__subcmd__help,help)
                cmd="bauxite__subcmd__link__subcmd__help__subcmd__help"
                ;;
            bauxite__subcmd__link__subcmd__help,trace-stats)
                cmd="bauxite__subcmd__link__subcmd__help__subcmd__trace__subcmd__stats"
                ;;
            bauxite__subcmd__profile,check)
                cmd="bauxite__subcmd__profile__subcmd__check"
                ;;
            bauxite__subcmd__profile,help)
                cmd="bauxite__subcmd__profile__subcmd__help"
                ;;
            bauxite__subcmd__profile,schema)
                cmd="bauxite__subcmd__profile__subcmd__schema"
                ;;
            bauxite__subcmd__profile__subcmd__help,check)
                cmd="bauxite__subcmd__profile__subcmd__help__subcmd__check"
                ;;
            bauxite__subcmd__profile__subcmd__help,help)
                cmd="bauxite__subcmd__profile__subcmd__help__subcmd__help"
                ;;
            bauxite__subcmd__profile__subcmd__help,schema)
                cmd="bauxite__subcmd__profile__subcmd__help__subcmd__schema"
                ;;
            bauxite__subcmd__sim,agree)
                cmd="bauxite__subcmd__sim__subcmd__agree"
                ;;
            bauxite__subcmd__sim,help)
                cmd="bauxite__subcmd__sim__subcmd__help"
                ;;
            bauxite__subcmd__sim,merge)
                cmd="bauxite__subcmd__sim__subcmd__merge"
                ;;
            bauxite__subcmd__sim,robot)
                cmd="bauxite__subcmd__sim__subcmd__robot"
                ;;
            bauxite__subcmd__sim,run)
                cmd="bauxite__subcmd__sim__subcmd__run"
                ;;
            bauxite__subcmd__sim,study)
                cmd="bauxite__subcmd__sim__subcmd__study"
                ;;
            bauxite__subcmd__sim__subcmd__help,agree)
                cmd="bauxite__subcmd__sim__subcmd__help__subcmd__agree"
                ;;
            bauxite__subcmd__sim__subcmd__help,help)
                cmd="bauxite__subcmd__sim__subcmd__help__subcmd__help"
                ;;
            bauxite__subcmd__sim__subcmd__help,merge)
                cmd="bauxite__subcmd__sim__subcmd__help__subcmd__merge"
                ;;
            bauxite__subcmd__sim__subcmd__help,robot)
                cmd="bauxite__subcmd__sim__subcmd__help__subcmd__robot"
                ;;
            bauxite__subcmd__sim__subcmd__help,run)
                cmd="bauxite__subcmd__sim__subcmd__help__subcmd__run"
                ;;
            bauxite__subcmd__sim__subcmd__help,study)
                cmd="bauxite__subcmd__sim__subcmd__help__subcmd__study"
                ;;
            *)
                ;;
        esac
    done

    case "${cmd}" in
        bauxite)
            opts="-h -V --help --version up demo audit bridge probe-responder eval down reflect link link-reap profile reference sim status help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 1 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__audit)
            opts="-h --json --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__bridge)
            opts="-h --config --record --metrics --help schema bench help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --record)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --metrics)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__bridge__subcmd__bench)
            opts="-h --duration --capacity-duration --sizes --domain --out --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --duration)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --capacity-duration)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sizes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --domain)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --out)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__bridge__subcmd__help)
            opts="schema bench help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__bridge__subcmd__help__subcmd__bench)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__bridge__subcmd__help__subcmd__help)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__bridge__subcmd__help__subcmd__schema)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__bridge__subcmd__schema)
            opts="-h --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__demo)
            opts="-h --trials --duration --rate --link --timeline --out --direction --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --trials)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --duration)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rate)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --link)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --timeline)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --out)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --direction)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__down)
            opts="-h --iface --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --iface)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__eval)
            opts="-h --help bridge peer help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__eval__subcmd__bridge)
            opts="-h --scenario --rmw --quick --no-realtime --out --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --scenario)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rmw)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --out)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__eval__subcmd__help)
            opts="bridge peer help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__eval__subcmd__help__subcmd__bridge)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__eval__subcmd__help__subcmd__help)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__eval__subcmd__help__subcmd__peer)
            opts="pub sub"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__eval__subcmd__help__subcmd__peer__subcmd__pub)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 5 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__eval__subcmd__help__subcmd__peer__subcmd__sub)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 5 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__eval__subcmd__peer)
            opts="-h --help pub sub help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__eval__subcmd__peer__subcmd__help)
            opts="pub sub help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__eval__subcmd__peer__subcmd__help__subcmd__help)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 5 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__eval__subcmd__peer__subcmd__help__subcmd__pub)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 5 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__eval__subcmd__peer__subcmd__help__subcmd__sub)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 5 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__eval__subcmd__peer__subcmd__pub)
            opts="-h --topic --hz --duration --ranges --best-effort --history --depth --max-samples --domain --interface --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --topic)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --hz)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --duration)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ranges)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --history)
                    COMPREPLY=($(compgen -W "keep_all keep_last" -- "${cur}"))
                    return 0
                    ;;
                --depth)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-samples)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --domain)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --interface)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__eval__subcmd__peer__subcmd__sub)
            opts="-h --topic --best-effort --depth --duration --domain --interface --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --topic)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --depth)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --duration)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --domain)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --interface)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__help)
            opts="up demo audit bridge probe-responder eval down reflect link link-reap profile reference sim status help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__help__subcmd__audit)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__help__subcmd__bridge)
            opts="schema bench"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__help__subcmd__bridge__subcmd__bench)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__help__subcmd__bridge__subcmd__schema)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__help__subcmd__demo)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__help__subcmd__down)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__help__subcmd__eval)
            opts="bridge peer"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__help__subcmd__eval__subcmd__bridge)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__help__subcmd__eval__subcmd__peer)
            opts="pub sub"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__help__subcmd__eval__subcmd__peer__subcmd__pub)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 5 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__help__subcmd__eval__subcmd__peer__subcmd__sub)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 5 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__help__subcmd__help)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__help__subcmd__link)
            opts="trace-stats"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__help__subcmd__link__subcmd__reap)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__help__subcmd__link__subcmd__trace__subcmd__stats)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__help__subcmd__probe__subcmd__responder)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__help__subcmd__profile)
            opts="check schema"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__help__subcmd__profile__subcmd__check)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__help__subcmd__profile__subcmd__schema)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__help__subcmd__reference)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__help__subcmd__reflect)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__help__subcmd__sim)
            opts="run study merge robot agree"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__help__subcmd__sim__subcmd__agree)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__help__subcmd__sim__subcmd__merge)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__help__subcmd__sim__subcmd__robot)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__help__subcmd__sim__subcmd__run)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__help__subcmd__sim__subcmd__study)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__help__subcmd__status)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__help__subcmd__up)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__link)
            opts="-h --up --down --timeline --record --as-root --between --help trace-stats help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --up)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --down)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --timeline)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --record)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --between)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__link__subcmd__reap)
            opts="-h --netns --host-iface --nft-table --ip-forward --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --netns)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --host-iface)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --nft-table)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ip-forward)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__link__subcmd__help)
            opts="trace-stats help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__link__subcmd__help__subcmd__help)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__link__subcmd__help__subcmd__trace__subcmd__stats)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__link__subcmd__trace__subcmd__stats)
            opts="-h --json --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__probe__subcmd__responder)
            opts="-h --config --name --answer-delay --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --name)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --answer-delay)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__profile)
            opts="-h --help check schema help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__profile__subcmd__check)
            opts="-h --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__profile__subcmd__help)
            opts="check schema help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__profile__subcmd__help__subcmd__check)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__profile__subcmd__help__subcmd__help)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__profile__subcmd__help__subcmd__schema)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__profile__subcmd__schema)
            opts="-h --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__reference)
            opts="-h --out --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --out)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__reflect)
            opts="-h --port --bind --allow --key-file --metrics --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --port)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bind)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --allow)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --key-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --metrics)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__sim)
            opts="-h --help run study merge robot agree help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__sim__subcmd__agree)
            opts="-h --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__sim__subcmd__help)
            opts="run study merge robot agree help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__sim__subcmd__help__subcmd__agree)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__sim__subcmd__help__subcmd__help)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__sim__subcmd__help__subcmd__merge)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__sim__subcmd__help__subcmd__robot)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__sim__subcmd__help__subcmd__run)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__sim__subcmd__help__subcmd__study)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__sim__subcmd__merge)
            opts="-h --out --png --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --out)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__sim__subcmd__robot)
            opts="-h --profile --link --timeline --sweep --rate --direction --duration --video-rate --seeds --seed --out --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --profile)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --link)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --timeline)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sweep)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rate)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --direction)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --duration)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --video-rate)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --seeds)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --seed)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --out)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__sim__subcmd__run)
            opts="-h --scheduler --dscp --seed --start-jitter-ms --followers --bg-mbps --queue --duration --start --bg-flows --bg-payload --bg-start-offset-ms --limit-mode --device-queue --access-queue --bottleneck-mbps --bottleneck-delay-ms --access-mbps --follower-access-mbps --access-delay-ms --control-bytes --control-pps --control-dscp --status-bytes --status-pps --status-dscp --telemetry-bytes --telemetry-pps --telemetry-dscp --bulk-bytes --bulk-pps --bulk-dscp --bg-burst --bg-burst-pareto --deadline --tcp-flows --link --out --png --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --scheduler)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --dscp)
                    COMPREPLY=($(compgen -W "on off" -- "${cur}"))
                    return 0
                    ;;
                --seed)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --start-jitter-ms)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --followers)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bg-mbps)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --queue)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --duration)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --start)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bg-flows)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bg-payload)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bg-start-offset-ms)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --limit-mode)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --device-queue)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --access-queue)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bottleneck-mbps)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bottleneck-delay-ms)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --access-mbps)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --follower-access-mbps)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --access-delay-ms)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --control-bytes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --control-pps)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --control-dscp)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --status-bytes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --status-pps)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --status-dscp)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --telemetry-bytes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --telemetry-pps)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --telemetry-dscp)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bulk-bytes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bulk-pps)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bulk-dscp)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bg-burst)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bg-burst-pareto)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --deadline)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tcp-flows)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --link)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --out)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__sim__subcmd__study)
            opts="-h --family --schedulers --seeds --jobs --seed --start-jitter-ms --load-bg-mbps --follower-counts --queue-limits --access-values --burst-values --tcp-values --wireless-values --shard --followers --bg-mbps --queue --duration --start --bg-flows --bg-payload --bg-start-offset-ms --limit-mode --device-queue --access-queue --bottleneck-mbps --bottleneck-delay-ms --access-mbps --follower-access-mbps --access-delay-ms --control-bytes --control-pps --control-dscp --status-bytes --status-pps --status-dscp --telemetry-bytes --telemetry-pps --telemetry-dscp --bulk-bytes --bulk-pps --bulk-dscp --bg-burst --bg-burst-pareto --deadline --tcp-flows --link --out --png --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --family)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --schedulers)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --seeds)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --jobs)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --seed)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --start-jitter-ms)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --load-bg-mbps)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --follower-counts)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --queue-limits)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --access-values)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --burst-values)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tcp-values)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --wireless-values)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --shard)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --followers)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bg-mbps)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --queue)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --duration)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --start)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bg-flows)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bg-payload)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bg-start-offset-ms)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --limit-mode)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --device-queue)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --access-queue)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bottleneck-mbps)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bottleneck-delay-ms)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --access-mbps)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --follower-access-mbps)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --access-delay-ms)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --control-bytes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --control-pps)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --control-dscp)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --status-bytes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --status-pps)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --status-dscp)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --telemetry-bytes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --telemetry-pps)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --telemetry-dscp)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bulk-bytes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bulk-pps)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bulk-dscp)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bg-burst)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bg-burst-pareto)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --deadline)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tcp-flows)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --link)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --out)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__status)
            opts="-h --iface --json --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --iface)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bauxite__subcmd__up)
            opts="-h --iface --profile --config --rate --gateway-iface --attach --metrics --ingress --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --iface)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --profile)
                    COMPREPLY=($(compgen -W "robot orchestrator" -- "${cur}"))
                    return 0
                    ;;
                --config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rate)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --gateway-iface)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --attach)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --metrics)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ingress)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
    esac
}

if [[ "${BASH_VERSINFO[0]}" -eq 4 && "${BASH_VERSINFO[1]}" -ge 4 || "${BASH_VERSINFO[0]}" -gt 4 ]]; then
    complete -F _bauxite -o nosort -o bashdefault -o default bauxite
else
    complete -F _bauxite -o bashdefault -o default bauxite
fi
