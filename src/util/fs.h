/* SPDX-License-Identifier: GPL-3.0-or-later */
/* File-system helpers: private temp dirs, atomic writes, recursive removal.  */
#ifndef PERUN_FS_H
#define PERUN_FS_H

#include <stddef.h>
#include <sys/types.h>

struct strbuf;

/* mkdir -p with the given mode for created directories.  */
int fs_mkdir_p(const char *path, mode_t mode);
/* Creates a private (0700) directory PREFIX-XXXXXX under $TMPDIR or /tmp,
 * locked for as long as this process lives (or until fs_remove_tree or
 * fs_keep_temp_dir); first removes the ones of that prefix whose perun died
 * (fs_remove_dead_temp_dirs).  Caller frees.  */
char *fs_mkdtemp(const char *prefix);
/* Removes the directories PREFIX-XXXXXX under $TMPDIR or /tmp that a perun
 * made with fs_mkdtemp and left when it was killed: ours, marked as locked,
 * and no longer locked by anyone.  Says which; returns how many.  */
int fs_remove_dead_temp_dirs(const char *prefix);
/* Keeps temp dir path after this process: no later run removes it.  */
void fs_keep_temp_dir(const char *path);
/* Removes a directory tree; missing is not an error.  */
int fs_remove_tree(const char *path);
/* Writes data to path through path.tmpXXXXXX, fsync and rename.  */
int fs_write_atomic(const char *path, const void *data, size_t len, mode_t mode);
/* Opens a new temp file path.tmpXXXXXX beside path (O_EXCL); *tmp_out gets
 * its name.  The file is locked (flock) for as long as it is open, and where
 * the file system allows it gets its name only once locked.  */
int fs_open_temp_beside(const char *path, char **tmp_out);
/* Removes the files path.tmpXXXXXX a killed perun left beside path: regular,
 * ours, and locked by no one.  Says which; returns how many.  */
int fs_remove_dead_temps_beside(const char *path);
/* fsync + close + rename; removes tmp on failure.  */
int fs_commit_temp(int fd, const char *tmp, const char *path);
int fs_exists(const char *path);
/* Searches PATH for an executable; caller frees; NULL when not found.  */
char *fs_which(const char *name);
/* The part of path after its last '/'.  */
const char *fs_basename(const char *path);
/* Absolute, canonical path of an existing file; caller frees.  */
char *fs_realpath(const char *path);


/* Checks every directory from '/' down to path (absolute) without following
 * symbolic links, creating missing ones (0700) when create is set: each
 * ancestor must be owned by root or us and writable by no one else, unless
 * it is sticky and the next component is root's or ours; path itself must be
 * ours and writable by no one else.  Refusals name the path, the reason and
 * end with fix.  0 trusted, -1 refused.  */
int fs_trust_dir(const char *path, int create, const char *fix);
/* fs_trust_dir creating what is missing, each directory made with mkdirat
 * beside the verified descriptor of its parent (never through a link) and
 * given mode: for directories others read (a report, aggregates).  */
int fs_make_trusted_dir(const char *path, mode_t mode, const char *fix);
/* path made absolute (against the working directory) without '.' or '..',
 * as fs_trust_dir takes it; a '..' may undo only a real directory, never a
 * symbolic link.  Caller frees; NULL when refused (reported).  */
char *fs_absolute(const char *path);
/* Opens an existing file perun wrote (read-only plus flags, O_NOFOLLOW) and
 * checks the open file: regular, ours, writable by no one else.  -1 with
 * errno ENOENT when missing (quietly), EPERM when refused (reported).  */
int fs_open_trusted(const char *path, int flags);
/* fs_open_trusted and read it all.  */
int fs_read_trusted(struct strbuf *sb, const char *path);
int fs_read_fd(int fd, struct strbuf *sb);
/* Reads a file a user named (a profile, a file to import): opened without
 * blocking (a FIFO or a device never hangs the reader) and checked on the
 * open descriptor to be a regular file.  -1 with errno set and nothing
 * reported when it cannot be opened; -1 with errno EINVAL and a message
 * naming path when it is not a regular file.  */
int fs_read_regular(struct strbuf *sb, const char *path);
/* Opens a file a user may control (a binary, its debuginfo, a profile) for
 * reading without ever blocking: O_NONBLOCK, so a FIFO or a device cannot
 * hang the open; the open descriptor must be a regular file and not one of a
 * kernel pseudo file system (procfs, sysfs: their files block or never end);
 * then O_NONBLOCK is cleared.  flags adds to O_RDONLY (O_NOFOLLOW).  -1 with
 * errno set and nothing reported when open fails; -1 with errno EINVAL
 * when the file is refused, with a message naming path when report is set.  */
int fs_open_regular(const char *path, int flags, int report);
/* Creates path (mode) or opens the existing one, without following a link,
 * and checks it is a directory of ours writable by no one else; returns its
 * descriptor for openat(), or -1 (reported).  */
int fs_open_private_dir(const char *path, mode_t mode);
/* Whether perun may write path over what is there: nothing, or a regular
 * file of ours writable by no one else (never a file of someone else's).  */
int fs_replaceable(const char *path);
/* nhex random hex digits (at most 64) and a NUL into out.  */
int fs_random_hex(char *out, size_t nhex);

#endif
