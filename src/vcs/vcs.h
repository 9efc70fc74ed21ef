/* Version control, for origins and the store.  The only module that
 * includes git2.h is vcs/git.c.  */
#ifndef PERUN_VCS_H
#define PERUN_VCS_H

/* Finds the work tree containing path; caller frees; NULL when none.  */
char *vcs_find_worktree(const char *path);
/* Writes the 40-hex HEAD commit of the repository at worktree; -1 when none.  */
int vcs_head(const char *worktree, char out[41]);

#endif
