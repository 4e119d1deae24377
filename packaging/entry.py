"""The bundle's executable: goalgui's command, or the embedded model's child process when started
with local_process.CHILD_FLAG (a frozen program cannot run `python -m`)."""

import multiprocessing
import sys

if __name__ == "__main__":
    multiprocessing.freeze_support()
    from goalgui.providers.local_process import CHILD_FLAG

    if len(sys.argv) > 1 and sys.argv[1] == CHILD_FLAG:
        from goalgui.providers.local_process import child_main

        child_main()
        raise SystemExit(0)
    from goalgui.cli import main

    raise SystemExit(main())
