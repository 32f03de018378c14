# The two commands: `make run` (the studio on its example project) and `make test`.
.PHONY: run test setup bench installer installer-smoke examples
setup:
	@bash scripts/setup.sh

run: setup
	@bash scripts/run.sh

test: setup
	@bash scripts/test.sh

bench: setup
	@for b in bench/*.py; do .venv/bin/python $$b || exit 1; done

installer: setup
	@bash installers/build.sh

# Unpacks the built .deb into a temporary root and runs it (version, selftest, window under Xvfb, uninstall).
installer-smoke: setup
	@bash installers/smoke.sh

# Regenerates projects/<name> (and <name>-single-pass) for every example film.
examples: setup
	@.venv/bin/python scripts/make_examples.py
