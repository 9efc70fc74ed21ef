/* File-system helpers: private temp dirs, atomic writes, recursive removal.  */
#ifndef PERUN_FS_H
#define PERUN_FS_H

#include <stddef.h>
#include <sys/types.h>

/* mkdir -p with the given mode for created directories.  */
int fs_mkdir_p(const char *path, mode_t mode);
/* Creates a private (0700) directory under $TMPDIR or /tmp; caller frees.  */
char *fs_mkdtemp(const char *prefix);
/* Removes a directory tree; missing is not an error.  */
int fs_remove_tree(const char *path);
/* Writes data to path through path.tmpXXXXXX, fsync and rename.  */
int fs_write_atomic(const char *path, const void *data, size_t len, mode_t mode);
/* Opens a new temp file beside path (O_EXCL); *tmp_out gets its name.  */
int fs_open_temp_beside(const char *path, char **tmp_out);
/* fsync + close + rename; removes tmp on failure.  */
int fs_commit_temp(int fd, const char *tmp, const char *path);
int fs_exists(const char *path);
/* Searches PATH for an executable; caller frees; NULL when not found.  */
char *fs_which(const char *name);
/* The part of path after its last '/'.  */
const char *fs_basename(const char *path);
/* Absolute, canonical path of an existing file; caller frees.  */
char *fs_realpath(const char *path);

#endif
