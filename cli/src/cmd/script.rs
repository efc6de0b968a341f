//! `keyroute script`: print the Lua text (or SHA1) of a pool script, or list them.
//!
//! ```text
//! keyroute script least-used            # the text, byte for byte (ends with one newline)
//! keyroute script least-used --sha1     # the SHA1 that EVALSHA takes
//! keyroute script --list                # name, SHA1, number of keys, summary
//! ```
use std::io::Write;

use keyroute::error::ErrorCode;
use keyroute::script::{Script, SCRIPTS};

use super::CliError;

fn script_names() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(SCRIPTS.iter().map(Script::name))
}

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Run a script with EVALSHA <sha1> <numkeys> <keys...> <args...>, \
    loading the text on NOSCRIPT. `keyroute script --list` lists every script with its SHA1."
)]
pub struct Args {
    /// The script to print (see --list).
    #[arg(value_name = "NAME", required_unless_present = "list", value_parser = script_names())]
    name: Option<String>,
    /// List every script with its SHA1, number of keys and what it does.
    #[arg(long, conflicts_with_all = ["name", "sha1"])]
    list: bool,
    /// Print the script's SHA1 (lowercase hex) instead of its text.
    #[arg(long)]
    sha1: bool,
}

/// Prints what `args` asks for to standard output.
pub fn run(args: Args) -> Result<(), CliError> {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    write_output(&args, &mut out)?;
    out.flush()?;
    Ok(())
}

fn known_names() -> String {
    SCRIPTS
        .iter()
        .map(Script::name)
        .collect::<Vec<_>>()
        .join(", ")
}

fn write_output(args: &Args, out: &mut impl Write) -> Result<(), CliError> {
    if args.list {
        let width = SCRIPTS.iter().map(|s| s.name().len()).max().unwrap_or(0);
        for script in SCRIPTS {
            writeln!(
                out,
                "{:width$}  {}  keys={}  {}",
                script.name(),
                script.sha1(),
                script.num_keys(),
                script.summary()
            )?;
        }
        return Ok(());
    }
    let Some(name) = args.name.as_deref() else {
        return Err(CliError::new(
            ErrorCode::BadType,
            format!("name a script ({}) or pass --list", known_names()),
        ));
    };
    let Some(script) = Script::by_name(name) else {
        return Err(CliError::new(
            ErrorCode::BadType,
            format!(
                "unknown script {name:?}; known scripts: {} (see `keyroute script --list`)",
                known_names()
            ),
        ));
    };
    if args.sha1 {
        writeln!(out, "{}", script.sha1())?;
    } else {
        out.write_all(script.text().as_bytes())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        args: Args,
    }

    fn output(argv: &[&str]) -> Result<String, String> {
        let cli = Cli::try_parse_from(std::iter::once("script").chain(argv.iter().copied()))
            .map_err(|err| err.to_string())?;
        let mut out = Vec::new();
        write_output(&cli.args, &mut out).map_err(|err| err.to_string())?;
        String::from_utf8(out).map_err(|err| err.to_string())
    }

    #[test]
    fn prints_the_least_used_text_exactly() {
        assert_eq!(
            output(&["least-used"]).as_deref(),
            Ok(keyroute::select::LEAST_USED_SCRIPT)
        );
    }

    #[test]
    fn prints_every_script_and_its_sha1() {
        for script in SCRIPTS {
            assert_eq!(output(&[script.name()]).as_deref(), Ok(script.text()));
            assert_eq!(
                output(&[script.name(), "--sha1"]),
                Ok(format!("{}\n", script.sha1()))
            );
        }
    }

    #[test]
    fn lists_every_script() {
        let list = output(&["--list"]).expect("list");
        assert_eq!(list.lines().count(), SCRIPTS.len());
        for script in SCRIPTS {
            assert!(list.contains(script.name()) && list.contains(script.sha1()));
        }
    }

    #[test]
    fn unknown_or_missing_names_are_errors() {
        let err = output(&["most-used"]).expect_err("unknown");
        assert!(
            err.contains("most-used") && err.contains("least-used"),
            "{err}"
        );
        assert!(output(&[]).is_err());
        assert!(output(&["seed", "--list"]).is_err());
    }
}
