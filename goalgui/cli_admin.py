"""The administrative commands: `goalgui profiles ...` (provider profiles and their keys) and
`goalgui journal check|recover`. Split from cli.py, which drives runs."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from . import paths
from .engine.lifecycle import InputError
from .terminal import shown


def cmd_profiles(args) -> int:
    from .settings import NEEDS_KEY, Profile, Settings, delete_key, key_source, store_key

    settings = Settings.load()
    if args.action == "list":
        if not settings.profiles:
            print("no profiles yet: goalgui profiles add NAME --kind openai|anthropic|ollama --base-url URL --model M")
        for p in settings.profiles.values():
            key = key_source(p)[1]  # where the key used is really found, not where it was meant to be
            print(f"{p.name:<16} {p.kind:<10} {shown(p.model):<28} {shown(p.base_url)}  (key: {key})")
        return 0
    if args.action == "remove":
        settings.profile(args.name)
        del settings.profiles[args.name]
        settings.save()
        delete_key(args.name)
        print(f"removed profile {args.name}")
        return 0
    if args.action == "test":
        return _test_profile(settings.profile(args.name))
    profile = Profile(args.name, args.kind, args.base_url, args.model, key_env=args.key_env,
                      connect_timeout=args.connect_timeout, read_timeout=args.read_timeout,
                      request_timeout=args.request_timeout, max_reply_mb=args.max_reply_mb,
                      structured_output=args.structured_output, prompt_profile=args.prompt_profile,
                      embeddings_model=args.embeddings_model).validated()
    if NEEDS_KEY[profile.kind] and not args.key_env:
        if not sys.stdin.isatty():
            raise InputError("no terminal to ask for the key: run this in a terminal or give --key-env VAR")
        import getpass

        key = getpass.getpass(f"API key for {profile.name} (stored in the system keyring"
                              + ("; Enter for none" if profile.kind == "openai" else "") + "): ").strip()
        if key:
            store_key(profile.name, key)
        elif profile.kind != "openai":  # a local OpenAI-compatible server may need none; Anthropic always does
            raise InputError(f"a {profile.kind} profile needs a key")
    settings.profiles[profile.name] = profile
    settings.save()
    print(f"saved profile {profile.name}; try it with: goalgui profiles test {profile.name}")
    return 0


def _test_profile(profile) -> int:
    from .engine.model import ProviderError
    from .providers import probe

    try:
        text, model, seconds = asyncio.run(probe(profile))
    except ProviderError as exc:  # printed by main as "goalgui: ...", exit 2
        raise InputError(f"{profile.name}: {exc.kind}: {exc}") from None
    print(f"{profile.name}: answered in {seconds * 1000:.0f} ms by {shown(model)}: {shown(repr(text[:60]))}")
    return 0


def cmd_journal(args) -> int:
    from .journal import guard

    path = paths.journal_path(args.journal)
    if args.action == "check":
        problems = guard.check(path)
        if not problems:
            print(f"the journal {path} is sound")
            return 0
        print(f"the journal {path} is damaged: {len(problems)} problem(s)", file=sys.stderr)
        for line in problems[:20]:
            print(f"  {shown(line)}", file=sys.stderr)
        raise InputError(f"'goalgui journal recover --journal {path} -o NEW' copies what can be read")
    if not args.output:
        raise InputError("journal recover needs -o NEW: the file to write the recovered journal into")
    for line in guard.recover(path, Path(args.output).expanduser()):
        print(shown(line))
    print(f"recovered into {args.output}; use it with --journal {args.output}")
    return 0
