//! Running input: statements split from text (SQL ended by `;` or an empty line, `.commands`
//! one a line), each a query (`session.rs`), a statement on the analytical store
//! (`analytics_cmd.rs`) or a dot-command (`commands.rs`), and `.read` files inside one another.

use crate::commands::Flow;
use crate::session::{Outcome, Session};
use crate::statements::{split_statements, strip_explain, Statement};

/// `.read` files may read others up to this depth.
const MAX_READ_DEPTH: usize = 16;

impl Session {
    /// Runs every statement of `text` (SQL ended by `;` or an empty line, `.commands` one a line).
    pub fn run_input(&mut self, text: &str) -> Outcome {
        let mut outcome = Outcome::default();
        for statement in split_statements(text) {
            let printed = match &statement {
                Statement::Sql { .. } => true,
                Statement::Command(line) => crate::items::is_item_command(line),
            };
            let ok = match statement {
                Statement::Command(line) => match crate::commands::run(self, &line) {
                    Ok(Flow::Continue) => true,
                    Ok(Flow::Quit(code)) => {
                        outcome.quit = true;
                        outcome.exit_code = code;
                        return outcome;
                    }
                    Ok(Flow::Read { path, text }) => {
                        let read = self.read_file(path, &text);
                        if read.quit {
                            outcome.quit = true;
                            outcome.exit_code = read.exit_code;
                            return outcome;
                        }
                        !read.failed
                    }
                    Err(msg) => {
                        self.error(&msg);
                        false
                    }
                },
                Statement::Sql { sql, line, column } => self.sql(&sql, line, column),
            };
            outcome.failed |= !ok;
            // `.once FILE`: the next statement that prints results goes to FILE.
            if self.once && printed {
                self.once = false;
                if let Err(msg) = crate::output::redirect(None) {
                    self.error(&msg);
                    outcome.failed = true;
                }
            }
            if !ok && self.bail {
                outcome.quit = true;
                return outcome;
            }
            // Output that cannot be written ends the run: quietly for a closed pipe, with an
            // error (reported once, by `main`) otherwise.
            if let Some(failure) = crate::output::failure() {
                outcome.failed |= failure != crate::output::Failure::Closed;
                outcome.quit = true;
                return outcome;
            }
        }
        outcome
    }

    /// `.read FILE`: its statements, named by the file in their errors; what their run did (a
    /// failure said, unless they asked to quit).
    fn read_file(&mut self, path: String, text: &str) -> Outcome {
        if self.reading >= MAX_READ_DEPTH {
            self.error(&format!(".read nested deeper than {MAX_READ_DEPTH} files (a file that reads itself?)"));
            return Outcome { failed: true, ..Outcome::default() };
        }
        let outer = self.source.replace(path.clone());
        self.reading += 1;
        let outcome = self.run_input(text);
        self.reading -= 1;
        self.source = outer;
        if outcome.failed && !outcome.quit {
            self.error(&format!("{path}: a statement failed"));
        }
        outcome
    }

    /// A SQL statement (a query, or `EXPLAIN [ANALYZE] query`) that starts on the input's
    /// 0-based `line`.
    fn sql(&mut self, sql: &str, line: usize, column: usize) -> bool {
        let (explain_mode, query) = strip_explain(sql);
        let analytical = if self.analytics_mode { Some(sql) } else { crate::analytics_cmd::strip_prefix(sql) };
        let result = match (analytical, explain_mode) {
            // Standard SQL on the analytical store (its own EXPLAIN included).
            (Some(statement), _) => self.analyze(statement),
            (None, Some(analyze)) => self.explain(query, analyze),
            (None, None) => self.query(query),
        };
        match result {
            Ok(()) => true,
            Err(msg) => {
                let msg = crate::statements::shift_position(&msg, line, column);
                // `INSERT ...`, `DROP ...`: what does it here.
                match crate::statements::shell_hint(query) {
                    Some(hint) => self.error(&format!("{msg}\n{hint}")),
                    None => self.error(&msg),
                }
                false
            }
        }
    }
}
