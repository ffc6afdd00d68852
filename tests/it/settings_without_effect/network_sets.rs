//! A `--set network.X` that no message would see (every busy link overrides
//! it) is refused.

use super::*;

/// Every link that carries messages sets its own loss.
const OWN_LOSS: &str = r#"summary = "every link its own loss"

[[network.links]]
from = "client"
to = "service"
loss_per_mille = 10

[[network.links]]
from = "service"
loss_per_mille = 20

[[network.links]]
from = "bank"
to = "service"
loss_per_mille = 0
"#;

#[test]
fn a_set_of_a_network_value_every_busy_link_overrides_is_refused() {
    let dir = support::scratch("settings_without_effect/network-set");
    let file = dir.join("own.toml");
    std::fs::write(&file, OWN_LOSS).unwrap();
    let f = file.to_string_lossy().to_string();
    run_case(
        &case(
            "--set network.loss_per_mille that no link takes",
            &[
                "check",
                &f,
                "--runs",
                "2",
                "--set",
                "network.loss_per_mille=300",
            ],
        )
        .code(2)
        .err("error: --set network.loss_per_mille=300: network.loss_per_mille changes no message")
        .err("[[network.links]] entry 1 (from \"client\" to \"service\")")
        .err("entry 2 (from \"service\" to any actor)")
        .err("--set 'network.links=["),
    );
    // The links take the file's delays and duplication: those sets reach them.
    run_case(&case(
        "--set network.duplicate_per_mille reaches every link",
        &[
            "check",
            &f,
            "--runs",
            "2",
            "--set",
            "network.duplicate_per_mille=300",
        ],
    ));
    // One busy link without its own loss takes the set value: accepted.
    let partial = OWN_LOSS.replace(
        "from = \"bank\"\nto = \"service\"\nloss_per_mille = 0\n",
        "from = \"bank\"\nto = \"service\"\ndelay_ms_max = 60\n",
    );
    let s = load_text("p.toml", &partial, &["network.loss_per_mille=300"]);
    assert_eq!(s.name, "p");
    // The suggested replacement is a working --set.
    run_case(&case(
        "replacing the entries lets network.loss_per_mille through",
        &[
            "check",
            &f,
            "--runs",
            "2",
            "--set",
            "network.links=[{from = \"client\", to = \"service\", loss_per_mille = 5}]",
            "--set",
            "network.loss_per_mille=300",
        ],
    ));
    let _ = std::fs::remove_dir_all(&dir);
}
