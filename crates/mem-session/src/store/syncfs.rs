//! Making a batch of staged files durable with one `syncfs` of their file system, where that
//! is sure.

use std::fs::File;
use std::path::Path;

/// The file system of a store, to make everything written on it durable at once
/// ([`FileSystem::sync`]); only where that is sure ([`FileSystem::of`]). Elsewhere than Linux
/// there is none (the type has no value): callers fsync each file.
#[cfg(target_os = "linux")]
pub(crate) struct FileSystem(File);

/// See the Linux version: no file system is synced as a whole here.
#[cfg(not(target_os = "linux"))]
pub(crate) enum FileSystem {}

impl FileSystem {
    /// The file system that holds `dir`: `None` (callers then fsync each file,
    /// [`StagedSession::sync`]) unless this is Linux 5.8 or later (before, `syncfs` reported no
    /// writeback error) and `dir` is on a local disk file system whose `syncfs` writes
    /// everything back and flushes the disk (ext2/3/4, XFS, Btrfs, F2FS; not FUSE, virtiofs or
    /// network file systems, where only an fsync of the file itself is sure).
    pub(crate) fn of(dir: &Path) -> Option<FileSystem> {
        #[cfg(target_os = "linux")]
        {
            const LOCAL: &[i64] = &[
                0xEF53,      // ext2, ext3, ext4
                0x5846_5342, // XFS
                0x9123_683E, // Btrfs
                0xF2F5_2010, // F2FS
            ];
            let release = rustix::system::uname();
            let release = release.release().to_string_lossy();
            let mut parts = release
                .split(['.', '-'])
                .map(|p| p.parse::<u32>().unwrap_or(0));
            let version = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
            if version < (5, 8) {
                return None;
            }
            let handle = File::open(dir).ok()?;
            let kind = rustix::fs::fstatfs(&handle).ok()?.f_type;
            #[allow(clippy::useless_conversion)] // `f_type` is an `i32` on some targets
            let kind = i64::from(kind);
            LOCAL.contains(&kind).then_some(FileSystem(handle))
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = dir;
            None
        }
    }

    /// Makes everything written so far on this file system durable: one `syncfs(2)`. For a
    /// batch of new files this replaces an fsync of each. On ext4 each fsync of a new file
    /// writes its inode block and waits for it alone; `syncfs` writes the batch's data and
    /// inodes back together and flushes the disk once (a Codex import's fsyncs were ~7 % of
    /// its samples: `docs/BENCHMARKS.md`). It also writes back what other programs wrote
    /// there, and an error it reports may be theirs: callers then fsync each of their files.
    ///
    /// Errors: I/O, as `syncfs` reports it (writeback errors since the last call).
    pub(crate) fn sync(&self) -> std::io::Result<()> {
        #[cfg(target_os = "linux")]
        {
            rustix::fs::syncfs(&self.0).map_err(std::io::Error::from)
        }
        #[cfg(not(target_os = "linux"))]
        {
            match *self {}
        }
    }

    /// Whether [`FileSystem::sync`] would write back little besides `own_bytes` (the bytes
    /// written and not yet synced by the caller): the page cache that is dirty or under
    /// writeback, all file systems together (`Dirty` + `Writeback` in `/proc/meminfo`), is at
    /// most twice `own_bytes`, or [`FOREIGN_DIRTY_MAX`] more. A `syncfs` writes back the
    /// whole file system and waits for it: with 400 MB another program had just written, a
    /// one-file import (a hook's, on every turn) took 0.23–0.29 s instead of under 0.01 s
    /// (`docs/BENCHMARKS.md`). `false` when the counts cannot be read.
    pub(crate) fn little_else_dirty(&self, own_bytes: u64) -> bool {
        mem_core::fsread::read_to_string("/proc/meminfo")
            .is_ok_and(|meminfo| little_else_dirty_in(&meminfo, own_bytes))
    }
}

/// [`FileSystem::little_else_dirty`] for the text of `/proc/meminfo` (`false` when it lacks
/// the `Dirty:` or the `Writeback:` line).
pub(super) fn little_else_dirty_in(meminfo: &str, own_bytes: u64) -> bool {
    let kib = |name: &str| -> Option<u64> {
        let line = meminfo.lines().find(|l| l.starts_with(name))?;
        line[name.len()..]
            .trim()
            .strip_suffix("kB")?
            .trim()
            .parse()
            .ok()
    };
    let (Some(dirty), Some(writeback)) = (kib("Dirty:"), kib("Writeback:")) else {
        return false;
    };
    let pending = dirty.saturating_add(writeback).saturating_mul(1024);
    pending
        <= own_bytes
            .saturating_mul(2)
            .max(own_bytes.saturating_add(FOREIGN_DIRTY_MAX))
}

/// Bytes of unwritten data besides a batch's own that its `syncfs` may write back
/// ([`FileSystem::little_else_dirty`]): 64 MiB. They include the import's own files not yet in
/// a batch (up to its window of files) and its metas (not synced one by one), and another
/// program's data written back now is data the kernel writes anyway: in bulk a `syncfs` can
/// cost less than an fsync of each file (with 200 MB of another program's data unwritten, a
/// 100 MB Codex import took 0.53–0.62 s syncing the file system, 0.73–0.80 s fsyncing each
/// file).
pub(super) const FOREIGN_DIRTY_MAX: u64 = 64 << 20;

#[cfg(test)]
mod tests {
    use super::*;

    /// A batch syncs the whole file system only where that is sure: never on procfs or
    /// tmpfs (nor FUSE, virtiofs, network file systems: only local disk file systems).
    #[cfg(target_os = "linux")]
    #[test]
    fn the_file_system_is_synced_as_a_whole_only_on_local_disks() {
        assert!(FileSystem::of(Path::new("/proc")).is_none());
        let shm = Path::new("/dev/shm");
        if shm.is_dir() {
            assert!(FileSystem::of(shm).is_none());
        }
        assert!(FileSystem::of(Path::new("/nonexistent-dir-for-this-test")).is_none());
    }

    /// A batch is synced as a whole only while the unwritten page cache is at most twice its
    /// own bytes or 64 MiB more; counts that cannot be read say no.
    #[test]
    fn the_file_system_is_synced_whole_only_when_little_else_is_dirty() {
        let meminfo = |dirty: u64, writeback: u64| {
            format!(
                "MemTotal:       24683568 kB\nDirty:          {dirty:>8} kB\n\
                 Writeback:      {writeback:>8} kB\nWritebackTmp:          0 kB\n"
            )
        };
        let mib = 1u64 << 20;
        // 100 MiB of its own: up to 200 MiB pending (its own and 100 MiB more).
        assert!(little_else_dirty_in(&meminfo(100 * 1024, 0), 100 * mib));
        assert!(little_else_dirty_in(
            &meminfo(150 * 1024, 50 * 1024),
            100 * mib
        ));
        assert!(!little_else_dirty_in(
            &meminfo(150 * 1024, 50 * 1024 + 4),
            100 * mib
        ));
        // 100 KiB of its own: up to 64 MiB more.
        assert!(little_else_dirty_in(&meminfo(100 + 65536, 0), 100 << 10));
        assert!(!little_else_dirty_in(&meminfo(100 + 65537, 0), 100 << 10));
        // 400 MiB another program just wrote: not with a small batch.
        assert!(!little_else_dirty_in(&meminfo(400 * 1024, 0), 3 * mib));
        assert!(!little_else_dirty_in("MemTotal: 1 kB\n", 0));
        assert!(!little_else_dirty_in("Dirty: x kB\nWriteback: 0 kB\n", 0));
        // This machine's counts are read (nothing is larger than this batch).
        if let Some(fs) = FileSystem::of(&std::env::temp_dir()) {
            assert!(fs.little_else_dirty(u64::MAX / 4));
        }
    }
}
