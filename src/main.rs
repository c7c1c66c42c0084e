//! The `git-handoff` binary: parse the command line, run it, print its
//! output or its error as one line, exit with its code.

use std::io::Write;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = git_handoff::Cli::parse_fast();
    match git_handoff::run(cli) {
        Ok(output) => {
            let terminal = std::io::IsTerminal::is_terminal(&std::io::stdout());
            let mut stdout = std::io::stdout().lock();
            // A reader that went away (`| head`) is not an error of ours.
            let _ = git_handoff::write_out(&output, &mut stdout, terminal)
                .and_then(|()| stdout.flush());
            if let Some(line) = &output.trailer {
                eprintln!("{}", git_handoff::escape::clean(line));
            }
            output.exit_code()
        }
        Err(err) => {
            let message = git_handoff::error_message(&err);
            let message = git_handoff::escape::clean(&message);
            let code = git_handoff::exit_code_of(&err);
            // As git: `fatal:` for what dies (128), `error:` for a refusal.
            let prefix = if code == 128 { "fatal" } else { "error" };
            eprintln!("{prefix}: {message}");
            ExitCode::from(code)
        }
    }
}
