//! Sharing over the transports teams use: smart HTTP (`git http-backend`
//! behind lighttpd on loopback, protocol v0 and v2) and ssh (an sshd on
//! loopback), each started by the test. Where the machine lacks the
//! server, the test says so and passes (`.ci/run` installs both).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use crate::support::*;

const T1: &str = "2026-11-30T09:00:00Z";

/// A server process, killed when dropped.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Wait until something listens on `port`.
fn listening(port: u16) -> bool {
    for _ in 0..200 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(25));
    }
    false
}

fn exec_path() -> PathBuf {
    let out = Command::new("git").arg("--exec-path").output().unwrap();
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
}

/// A bare repository with one commit on `main`, at `dir/remote.git`.
fn served_repo(sb: &Sandbox, dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let bare = dir.join("remote.git");
    sb.git(
        dir,
        &["init", "-q", "--bare", "-b", "main", bare.to_str().unwrap()],
    );
    sb.git(&bare, &["config", "http.receivepack", "true"]);
    let url = format!("file://{}", bare.display());
    let seed = sb.repo("seed");
    sb.git(&seed, &["push", "-q", &url, "main"]);
    bare
}

/// lighttpd serving `git http-backend` for the repositories below
/// `root` at `http://127.0.0.1:PORT/git/`; every request's `Git-Protocol`
/// header is appended to `root/protocols`.
fn http_server(sb: &Sandbox, root: &Path) -> Option<(Server, String)> {
    let lighttpd = ["/usr/sbin/lighttpd", "/usr/bin/lighttpd"]
        .into_iter()
        .find(|p| Path::new(p).exists())?;
    let port = free_port();
    let cgi = sb.path("git-cgi");
    std::fs::write(
        &cgi,
        format!(
            "#!/bin/sh\necho \"${{HTTP_GIT_PROTOCOL:-none}}\" >> '{root}/protocols'\nexec '{backend}'\n",
            root = root.display(),
            backend = exec_path().join("git-http-backend").display()
        ),
    )
    .unwrap();
    make_executable(&cgi);
    let conf = sb.path("lighttpd.conf");
    std::fs::write(
        &conf,
        format!(
            r#"server.document-root = "{root}"
server.bind = "127.0.0.1"
server.port = {port}
server.errorlog = "{log}"
server.modules = ( "mod_alias", "mod_cgi", "mod_setenv" )
alias.url = ( "/git" => "{cgi}" )
$HTTP["url"] =~ "^/git" {{
  cgi.assign = ( "" => "" )
  setenv.add-environment = ( "GIT_PROJECT_ROOT" => "{root}", "GIT_HTTP_EXPORT_ALL" => "", "REMOTE_USER" => "ada" )
}}
"#,
            root = root.display(),
            log = sb.path("lighttpd.log").display(),
            cgi = cgi.display(),
        ),
    )
    .unwrap();
    let child = Command::new(lighttpd)
        .args(["-D", "-f", conf.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let server = Server(child);
    listening(port).then(|| (server, format!("http://127.0.0.1:{port}/git/remote.git")))
}

/// sshd on loopback letting this user in with a key made for the test:
/// the server, the URL of `bare` and the ssh command git is to run.
fn ssh_server(sb: &Sandbox, bare: &Path) -> Option<(Server, String, String)> {
    let sshd = ["/usr/sbin/sshd", "/usr/bin/sshd"]
        .into_iter()
        .find(|p| Path::new(p).exists())?;
    which("ssh")?;
    let keys = sb.path("ssh");
    std::fs::create_dir_all(&keys).unwrap();
    for name in ["host", "client"] {
        let path = keys.join(name);
        let ok = Command::new("ssh-keygen")
            .args([
                "-q",
                "-t",
                "ed25519",
                "-N",
                "",
                "-f",
                path.to_str().unwrap(),
            ])
            .status()
            .ok()?
            .success();
        if !ok {
            return None;
        }
    }
    std::fs::copy(keys.join("client.pub"), keys.join("authorized_keys")).unwrap();
    let _ = std::fs::create_dir_all("/run/sshd");
    let port = free_port();
    let conf = keys.join("sshd_config");
    std::fs::write(
        &conf,
        format!(
            "ListenAddress 127.0.0.1\nPort {port}\nHostKey {k}/host\nAuthorizedKeysFile {k}/authorized_keys\nStrictModes no\nUsePAM no\nPermitRootLogin yes\nPasswordAuthentication no\nPidFile none\n",
            k = keys.display()
        ),
    )
    .unwrap();
    let child = Command::new(sshd)
        .args(["-D", "-e", "-f", conf.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let server = Server(child);
    if !listening(port) {
        return None;
    }
    let user = String::from_utf8(Command::new("id").arg("-un").output().ok()?.stdout).ok()?;
    let command = format!(
        "ssh -i {k}/client -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o BatchMode=yes -o LogLevel=ERROR",
        k = keys.display()
    );
    Some((
        server,
        format!("ssh://{}@127.0.0.1:{port}{}", user.trim(), bare.display()),
        command,
    ))
}

fn which(program: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(program))
        .find(|p| p.exists())
}

fn make_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A team (clones A and B) of the repository served at `url`.
fn team_at(sb: Sandbox, bare: PathBuf, url: String, config: &[&str]) -> Team {
    let root = sb.dir.path().to_path_buf();
    for name in ["A", "B"] {
        let mut args = vec![];
        for c in config {
            args.extend(["-c", *c]);
        }
        args.extend(["clone", "-q", url.as_str(), name]);
        sb.git(&root, &args);
        for c in config {
            let (k, v) = c.split_once('=').unwrap();
            sb.git(&sb.path(name), &["config", k, v]);
        }
    }
    let (a, b) = (sb.path("A"), sb.path("B"));
    Team {
        sb,
        bare,
        url,
        a,
        b,
    }
}

/// What every transport must carry: a push, a fetch into a fresh clone
/// (briefs by id and the history), a fast-forward back, a divergence
/// reported on both sides and resolved.
fn share_over(t: &Team) {
    let v1 = t.write(&t.a, "k", T1, "a v1");
    t.run(&t.a, &["push"]).success();
    assert_eq!(t.remote_id("k").as_deref(), Some(v1.as_str()));
    // B is a fresh clone: its first fetch brings the brief and history.
    let out = t.run(&t.b, &["fetch"]).success();
    assert_stdout_has(&out, "created: k");
    assert_eq!(t.sb.log_ids(&t.b, "k"), std::slice::from_ref(&v1));
    let v2 = t.write(&t.b, "k", T2, "b v2");
    t.run(&t.b, &["push"]).success();
    let out = t.run(&t.a, &["fetch"]).success();
    assert_stdout_has(&out, "fast-forwarded: k");
    assert_eq!(t.id(&t.a, "refs/handoffs/k").as_deref(), Some(v2.as_str()));
    // Siblings: diverged on both sides, never pushed over each other.
    let va = t.write(&t.a, "k", T3, "a v3");
    let vb = t.write(&t.b, "k", T3, "b v3");
    t.run(&t.a, &["push"]).success();
    let out = t.run(&t.b, &["push"]).code(1);
    assert_stdout_has(&out, "diverged, not pushed: k (");
    assert_eq!(t.remote_id("k").as_deref(), Some(va.as_str()));
    t.run(&t.b, &["resolve", "k", "--keep-local"]).success();
    t.run(&t.b, &["push"]).success();
    let out = t.run(&t.a, &["fetch"]).success();
    assert_stdout_has(&out, "fast-forwarded: k");
    assert_eq!(t.id(&t.a, "refs/handoffs/k").as_deref(), Some(vb.as_str()));
    // Every version is in both histories.
    for dir in [&t.a, &t.b] {
        let ids = t.sb.log_ids(dir, "k");
        for v in [&v1, &v2, &va, &vb] {
            assert!(ids.contains(v), "{ids:?}");
        }
    }
}

#[test]
fn sharing_over_smart_http_with_protocol_v0_and_v2() {
    for version in ["0", "2"] {
        let sb = Sandbox::new();
        let root = sb.path("srv");
        let bare = served_repo(&sb, &root);
        let Some((_server, url)) = http_server(&sb, &root) else {
            eprintln!("skipped: lighttpd is not installed (apt-get install lighttpd)");
            return;
        };
        let setting = format!("protocol.version={version}");
        let t = team_at(sb, bare, url, &[&setting]);
        share_over(&t);
        let seen = std::fs::read_to_string(root.join("protocols")).unwrap();
        // Fetches speak the version asked for (a push is always v0).
        let v2 = seen.lines().filter(|l| *l == "version=2").count();
        match version {
            "2" => assert!(v2 >= 4, "{seen}"),
            _ => assert_eq!(v2, 0, "{seen}"),
        }
    }
}

#[test]
fn sharing_over_ssh() {
    let sb = Sandbox::new();
    let root = sb.path("srv");
    let bare = served_repo(&sb, &root);
    let Some((_server, url, command)) = ssh_server(&sb, &bare) else {
        eprintln!("skipped: sshd is not installed (apt-get install openssh-server)");
        return;
    };
    let setting = format!("core.sshCommand={command}");
    let t = team_at(sb, bare, url, &[&setting]);
    share_over(&t);
}
