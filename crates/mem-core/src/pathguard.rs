//! Whether a path under a root stays under it once symlinks are followed: the one check behind
//! every write and delete mewmem makes inside a project (`--allow-outside-project` in the CLI).

use std::path::{Path, PathBuf};

/// The first component of `path` (walking down from `root`) that resolves, symlinks followed,
/// to a place outside `root`: `Some((component, where it leads))`, `None` when every existing
/// part stays inside. `path` is absolute under `root` or relative to it; the parts that do not
/// exist yet are not checked (they will be created inside the last existing one).
///
/// # Errors
/// `root` or a part of `path` cannot be resolved for another reason than being missing.
pub fn leads_out(root: &Path, path: &Path) -> std::io::Result<Option<(PathBuf, PathBuf)>> {
    let real_root = root.canonicalize()?;
    let relative = path.strip_prefix(root).unwrap_or(path);
    let mut logical = root.to_path_buf();
    for part in relative.components() {
        logical.push(part);
        let resolved = match logical.canonicalize() {
            Ok(p) => p,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => break,
            Err(e) => return Err(e),
        };
        if !resolved.starts_with(&real_root) {
            return Ok(Some((logical, resolved)));
        }
    }
    Ok(None)
}

#[cfg(all(test, unix))]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_symlinked_parent_that_leaves_the_root_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let (root, outside) = (dir.path().join("p"), dir.path().join("o"));
        std::fs::create_dir_all(root.join(".mewcode")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        let note = root.join(".mewcode/memory/a.md");
        assert_eq!(leads_out(&root, &note).unwrap(), None);
        std::os::unix::fs::symlink(&outside, root.join(".mewcode/memory")).unwrap();
        let (part, to) = leads_out(&root, &note).unwrap().unwrap();
        assert_eq!(part, root.join(".mewcode/memory"));
        assert_eq!(to, outside.canonicalize().unwrap());
    }
}
