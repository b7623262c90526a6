//! `schedlab man --out DIR`: the man pages made from the clap definitions (the same text as
//! `--help`): schedlab.1, and schedlab-COMMAND.1 for each visible command.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;
use clap::CommandFactory;

use crate::cli::{Args, ManArgs};

pub fn man(args: &ManArgs) -> anyhow::Result<ExitCode> {
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create {}", args.out.display()))?;
    let command = Args::command();
    write_page(&args.out, "schedlab", command.clone())?;
    for sub in command.get_subcommands().filter(|c| !c.is_hide_set()) {
        let name = format!("schedlab-{}", sub.get_name());
        write_page(
            &args.out,
            &name,
            sub.clone()
                .display_name(name.clone())
                .bin_name(name.replace("-", " ")),
        )?;
        for leaf in sub.get_subcommands().filter(|c| !c.is_hide_set()) {
            let name = format!("schedlab-{}-{}", sub.get_name(), leaf.get_name());
            write_page(
                &args.out,
                &name,
                leaf.clone()
                    .display_name(name.clone())
                    .bin_name(name.replace("-", " ")),
            )?;
        }
    }
    println!("{}", args.out.join("schedlab.1").display());
    Ok(ExitCode::SUCCESS)
}

/// `command`'s page as DIR/NAME.1, replaced whole.
fn write_page(dir: &Path, name: &str, command: clap::Command) -> anyhow::Result<()> {
    let mut page = Vec::new();
    clap_mangen::Man::new(command.version(env!("CARGO_PKG_VERSION")))
        .render(&mut page)
        .with_context(|| format!("cannot render the man page {name}.1"))?;
    let path = dir.join(format!("{name}.1"));
    schedlab_tables::write_file_atomic(&path, &page)
        .with_context(|| format!("cannot write {}", path.display()))
}
