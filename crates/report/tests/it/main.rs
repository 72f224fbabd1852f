//! The integration tests of servebench-report, in one test binary (one link, one process).

mod report_capacity;
mod report_documents;
mod report_history;
mod report_svg;
