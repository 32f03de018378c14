"""Reports live with the store (the gate reads them below the checks layer); re-exported here."""
from studio.store.reports import (ADVISORY, REQUIRED, VERDICTS, Report, failing_required,  # noqa: F401
                                  load_reports, required_checks_pass, save_reports)
